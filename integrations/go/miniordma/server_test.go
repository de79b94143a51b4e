// SPDX-License-Identifier: MIT

package miniordma

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"
)

const (
	testAK = "hipobjgoAK"
	testSK = "hipobjgoSECRETkey0123456789"
)

// testServer is a hipobj-test-server on 127.0.0.1, port 0
// (HIPOBJ_TEST_SERVER names the binary), with SigV4 on.
type testServer struct {
	cmd  *exec.Cmd
	url  string // http://127.0.0.1:PORT
	host string // 127.0.0.1:PORT
}

func startServer(t *testing.T, args ...string) *testServer {
	t.Helper()
	bin := os.Getenv("HIPOBJ_TEST_SERVER")
	if bin == "" {
		t.Skip("HIPOBJ_TEST_SERVER is not set (integrations/go/run.sh sets it)")
	}
	a := append([]string{"--listen", "127.0.0.1:0", "--min-part-size", "1K",
		"--access-key", testAK, "--secret-key", testSK}, args...)
	return startProc(t, bin, a)
}

// startProc starts bin (the test server, or the gateway, which prints the
// same "listening on" line) with args and waits for its address.
func startProc(t *testing.T, bin string, a []string) *testServer {
	return startProcB(t, bin, a)
}

// startProcB is startProc for tests and benchmarks.
func startProcB(t testing.TB, bin string, a []string) *testServer {
	t.Helper()
	cmd := exec.Command(bin, a...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	s := &testServer{cmd: cmd}
	t.Cleanup(s.stop(t))
	select {
	case l := <-line:
		if !strings.HasPrefix(l, "listening on http://") {
			t.Fatalf("server said %q", l)
		}
		s.url = strings.TrimSpace(strings.TrimPrefix(l, "listening on "))
		s.host = strings.TrimPrefix(s.url, "http://")
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not start")
	}
	return s
}

// stop ends the server this test started (by its PID) and checks it
// exits 0.
func (s *testServer) stop(t testing.TB) func() {
	return func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("hipobj-test-server: %v", err)
		}
	}
}

// rdmaStats is the "rdma" part of /_hipobj/stats.
type rdmaStats struct {
	Requests int64 `json:"requests"`
	Get      int64 `json:"get"`
	Put      int64 `json:"put"`
	Declined int64 `json:"declined"`
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
}

type serverStats struct {
	RDMA rdmaStats `json:"rdma"`
	HTTP struct {
		BytesIn  int64 `json:"bytes_in"`
		BytesOut int64 `json:"bytes_out"`
	} `json:"http"`
	AuthFailures int64 `json:"auth_failures"`
}

func (s *testServer) stats(t *testing.T) serverStats {
	t.Helper()
	resp, err := http.Get(s.url + "/_hipobj/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st serverStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// client is a bridge to the server with the test's key pair.
func (s *testServer) client(t *testing.T, o Options) *Client {
	t.Helper()
	if o.Creds == nil {
		o.Creds = credentials.NewStaticV4(testAK, testSK, "")
	}
	c, err := New(s.host, &o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *testServer) bucket(t *testing.T, c *Client, name string) {
	t.Helper()
	if err := c.Minio().MakeBucket(context.Background(), name, minioMakeOpts); err != nil {
		t.Fatal(err)
	}
}

func credentialsFor(ak, sk string) *credentials.Credentials {
	return credentials.NewStaticV4(ak, sk, "")
}
