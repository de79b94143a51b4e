// SPDX-License-Identifier: MIT

package main

import (
	"bufio"
	"bytes"
	"context"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// server starts hipobj-test-server (HIPOBJ_TEST_SERVER) with SigV4 and a
// bucket; it returns the MC_HOST value for it.
func server(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("HIPOBJ_TEST_SERVER")
	if bin == "" {
		t.Skip("HIPOBJ_TEST_SERVER is not set (integrations/go/run.sh sets it)")
	}
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--min-part-size", "1K",
		"--access-key", "mcAK", "--secret-key", "mcSECRET")
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("hipobj-test-server: %v", err)
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	var u string
	select {
	case l := <-line:
		u = strings.TrimSpace(strings.TrimPrefix(l, "listening on "))
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not start")
	}
	return strings.Replace(u, "http://", "http://mcAK:mcSECRET@", 1)
}

func mcRun(t *testing.T, host string, args ...string) (int, string, string) {
	t.Helper()
	var so, se bytes.Buffer
	env := func(k string) string {
		if k == "MC_HOST_t" {
			return host
		}
		return ""
	}
	rc := run(args, &so, &se, env)
	return rc, so.String(), se.String()
}

// cp up (multipart), cat, cp down, an empty file, and --require-rdma on a
// host where RDMA is not available.
func TestCpCat(t *testing.T) {
	host := server(t)
	dir := t.TempDir()
	data := make([]byte, 5<<20+11)
	rand.New(rand.NewSource(5)).Read(data)
	src := filepath.Join(dir, "src.bin")
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// The bucket, by a plain S3 request through minio-go.
	m := &mc{o: options{noRDMA: true, region: "us-east-1", partSize: 5 << 20},
		getenv: func(k string) string { return map[string]string{"MC_HOST_t": host}[k] }}
	c, err := m.client("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Minio().MakeBucket(context.Background(), "mcb", makeOpts); err != nil {
		t.Fatal(err)
	}
	if rc, _, se := mcRun(t, host, "-v", "--part-size", "5242880", "cp", src, "t/mcb/dir/obj"); rc != 0 ||
		!strings.Contains(se, "put mcb/dir/obj: 5242891 bytes by HTTP") {
		t.Fatalf("cp up: %d %s", rc, se)
	}
	rc, so, se := mcRun(t, host, "cat", "t/mcb/dir/obj")
	if rc != 0 || so != string(data) {
		t.Fatalf("cat: %d, %d bytes, %s", rc, len(so), se)
	}
	dst := filepath.Join(dir, "dst.bin")
	if rc, _, se := mcRun(t, host, "cp", "t/mcb/dir/obj", dst); rc != 0 {
		t.Fatalf("cp down: %d %s", rc, se)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
		t.Fatal("cp down: the bytes differ")
	}
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, nil, 0o600)
	if rc, _, se := mcRun(t, host, "cp", empty, "t/mcb/empty"); rc != 0 {
		t.Fatalf("cp empty: %d %s", rc, se)
	}
	if rc, so, _ := mcRun(t, host, "cat", "t/mcb/empty"); rc != 0 || so != "" {
		t.Fatalf("cat empty: %d %q", rc, so)
	}
	if rc, _, se := mcRun(t, host, "cat", "t/mcb/missing"); rc != 1 || !strings.Contains(se, "does not exist") {
		t.Fatalf("cat missing: %d %s", rc, se)
	}
	if rc, _, se := mcRun(t, host, "--require-rdma", "--nic", "no_such_nic0",
		"cat", "t/mcb/dir/obj"); rc != 1 || !strings.Contains(se, "RDMA required") {
		t.Fatalf("--require-rdma: %d %s", rc, se)
	}
	if rc, _, _ := mcRun(t, host, "cp", src); rc != 2 {
		t.Fatalf("usage: %d", rc)
	}
}

var makeOpts = minio.MakeBucketOptions{}
