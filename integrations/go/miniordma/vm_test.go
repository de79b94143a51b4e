// SPDX-License-Identifier: MIT

//go:build hipobj_vm

package miniordma

// The Soft-RoCE VM lane's Go case (tests/vm/cases/t50_go_minio.sh runs
// this package's test binary, built with -tags hipobj_vm, inside the VM):
// the bridge over real verbs against hipobj-test-server on the rxe device
// and through hipobj-gateway, every byte compared and the servers'
// counters saying RDMA moved them; and the 501 fallback with
// --decline-rdma. HIPOBJ_GO_VM_NIC names the device (the case sets it).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"hipobject.org/go/hipobj"
)

var vmUp bool

func vmInit(t *testing.T) string {
	t.Helper()
	nic := os.Getenv("HIPOBJ_GO_VM_NIC")
	if nic == "" {
		t.Skip("HIPOBJ_GO_VM_NIC is not set (the VM case sets it)")
	}
	if _, err := os.Stat("/sys/class/infiniband/" + nic); err != nil {
		t.Skipf("no RDMA device %s", nic)
	}
	if os.Getenv("HIPOBJ_TEST_SERVER") == "" {
		p, err := exec.LookPath("hipobj-test-server")
		if err != nil {
			t.Skip("hipobj-test-server is not on PATH")
		}
		os.Setenv("HIPOBJ_TEST_SERVER", p)
	}
	if !vmUp {
		if err := hipobj.Init(hipobj.Config{GPUDevice: -1, NICHint: nic}); err != nil {
			t.Fatalf("hipobj.Init on %s: %v", nic, err)
		}
		vmUp = true
	}
	return nic
}

// roundTrips moves objects of several sizes, a range and a multipart
// upload by RDMA (RequireRDMA: a fallback fails the test) and reads
// every one back; it returns the payload bytes put and got.
func roundTrips(t *testing.T, c *Client, bucket string) (put, got int64) {
	t.Helper()
	for i, n := range []int{1, 4097, 1<<20 + 1, 16 << 20, 12<<20 + 3} {
		data := pattern(n, int64(100+i))
		b := buffer(t, n)
		copy(b.Bytes(), data)
		key := "vm/" + string(rune('a'+i))
		r, err := c.PutObject(ctx(t), bucket, key, b, 0, int64(n), PutOptions{})
		if err != nil || !r.RDMA {
			t.Fatalf("PUT %d bytes: %+v %v", n, r, err)
		}
		if n > 5<<20 && r.PartsRDMA < 2 {
			t.Fatalf("PUT %d bytes: %d parts, want a multipart upload", n, r.PartsRDMA)
		}
		g := buffer(t, n)
		if r, err = c.GetObject(ctx(t), bucket, key, g, 0, GetOptions{}); err != nil || !r.RDMA {
			t.Fatalf("GET %d bytes: %+v %v", n, r, err)
		}
		if !bytes.Equal(g.Bytes(), data) {
			t.Fatalf("GET %d bytes: the bytes differ", n)
		}
		put += int64(n)
		got += int64(n)
		if n > 8192 {
			copy(g.Bytes(), make([]byte, n))
			if _, err = c.GetObject(ctx(t), bucket, key, g, 3,
				GetOptions{Offset: 4095, Length: 4099}); err != nil {
				t.Fatalf("ranged GET: %v", err)
			}
			if !bytes.Equal(g.Bytes()[3:3+4099], data[4095:4095+4099]) {
				t.Fatal("ranged GET: the bytes differ")
			}
			got += 4099
		}
	}
	return put, got
}

func TestVMRDMA(t *testing.T) {
	vmInit(t)
	s := startServer(t, "--nic", os.Getenv("HIPOBJ_GO_VM_NIC"))
	c := s.client(t, Options{RequireRDMA: true, PartSize: 5 << 20})
	s.bucket(t, c, "vmb")
	before := s.stats(t)
	put, got := roundTrips(t, c, "vmb")
	after := s.stats(t)
	if after.RDMA.BytesIn-before.RDMA.BytesIn != put ||
		after.RDMA.BytesOut-before.RDMA.BytesOut != got {
		t.Fatalf("server RDMA bytes in %d out %d, want %d and %d",
			after.RDMA.BytesIn-before.RDMA.BytesIn,
			after.RDMA.BytesOut-before.RDMA.BytesOut, put, got)
	}
	if after.HTTP.BytesIn != before.HTTP.BytesIn || after.HTTP.BytesOut != before.HTTP.BytesOut {
		t.Fatal("payload bytes moved over HTTP")
	}
}

func TestVMDecline(t *testing.T) {
	vmInit(t)
	s := startServer(t, "--nic", os.Getenv("HIPOBJ_GO_VM_NIC"), "--decline-rdma")
	c := s.client(t, Options{})
	s.bucket(t, c, "vmd")
	data := pattern(3<<20+1, 200)
	b := buffer(t, len(data))
	copy(b.Bytes(), data)
	r, err := c.PutObject(ctx(t), "vmd", "k", b, 0, int64(len(data)), PutOptions{})
	if err != nil || r.RDMA || !strings.Contains(r.Fallback, "501") {
		t.Fatalf("PUT: %+v %v", r, err)
	}
	g := buffer(t, len(data))
	if r, err = c.GetObject(ctx(t), "vmd", "k", g, 0, GetOptions{}); err != nil || r.RDMA {
		t.Fatalf("GET: %+v %v", r, err)
	}
	if !bytes.Equal(g.Bytes(), data) {
		t.Fatal("the bytes differ")
	}
	if st := s.stats(t); st.RDMA.Declined < 2 || st.RDMA.BytesIn != 0 || st.RDMA.BytesOut != 0 {
		t.Fatalf("server stats %+v", st.RDMA)
	}
}

// Through hipobj-gateway in front of a plain-HTTP test server: RDMA
// between the gateway and the bridge, the objects read back from the
// store itself.
func TestVMGateway(t *testing.T) {
	nic := vmInit(t)
	gw, err := exec.LookPath("hipobj-gateway")
	if err != nil {
		t.Skip("hipobj-gateway is not on PATH")
	}
	store := startServer(t, "--no-rdma")
	sc := store.client(t, Options{NoRDMA: true})
	store.bucket(t, sc, "gwb")
	g := startProc(t, gw, []string{"--listen", "127.0.0.1:0", "--nic", nic,
		"--backend", store.url, "--backend-access-key", testAK,
		"--backend-secret-key", testSK, "--access-key", testAK, "--secret-key", testSK})
	c := g.client(t, Options{RequireRDMA: true, PartSize: 5 << 20})
	before := g.stats(t)
	put, got := roundTrips(t, c, "gwb")
	after := g.stats(t)
	if after.RDMA.BytesIn-before.RDMA.BytesIn != put ||
		after.RDMA.BytesOut-before.RDMA.BytesOut != got {
		t.Fatalf("gateway RDMA bytes in %d out %d, want %d and %d",
			after.RDMA.BytesIn-before.RDMA.BytesIn,
			after.RDMA.BytesOut-before.RDMA.BytesOut, put, got)
	}
	// The store holds the same bytes.
	obj, err := sc.Minio().GetObject(context.Background(), "gwb", "vm/c", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var back bytes.Buffer
	if _, err := back.ReadFrom(obj); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), pattern(1<<20+1, 102)) {
		t.Fatal("the store's copy differs")
	}
}

// BenchmarkVMGet compares the bridge's RDMA GET with minio-go's plain GET
// of the same object, 1 to 64 MiB, against hipobj-test-server on the VM's
// rxe device (docs/performance.md's table for the Go bridge):
//
//	HIPOBJ_GO_VM_NIC=rxe0 hipobj-go-vmtest -test.run '^$' \
//	    -test.bench VMGet -test.benchtime 20x
func BenchmarkVMGet(b *testing.B) {
	nic := os.Getenv("HIPOBJ_GO_VM_NIC")
	if nic == "" {
		b.Skip("HIPOBJ_GO_VM_NIC is not set")
	}
	if !vmUp {
		if err := hipobj.Init(hipobj.Config{GPUDevice: -1, NICHint: nic}); err != nil {
			b.Fatal(err)
		}
		vmUp = true
	}
	bin, err := exec.LookPath("hipobj-test-server")
	if err != nil {
		b.Skip("hipobj-test-server is not on PATH")
	}
	s := startProcB(b, bin, []string{"--listen", "127.0.0.1:0", "--nic", nic,
		"--random-etags", "--access-key", testAK, "--secret-key", testSK})
	c, err := New(s.host, &Options{RequireRDMA: true,
		Creds: credentialsFor(testAK, testSK)})
	if err != nil {
		b.Fatal(err)
	}
	bg := context.Background()
	if err := c.Minio().MakeBucket(bg, "bench", minioMakeOpts); err != nil {
		b.Fatal(err)
	}
	for _, mib := range []int{1, 4, 16, 64} {
		n := mib << 20
		buf, err := hipobj.AllocHost(n)
		if err != nil {
			b.Fatal(err)
		}
		key := fmt.Sprintf("o%d", mib)
		if _, err := c.PutObject(bg, "bench", key, buf, 0, int64(n), PutOptions{}); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("rdma/%dMiB", mib), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				r, err := c.GetObject(bg, "bench", key, buf, 0, GetOptions{Length: int64(n)})
				if err != nil || !r.RDMA {
					b.Fatalf("%+v %v", r, err)
				}
			}
		})
		b.Run(fmt.Sprintf("minio-go/%dMiB", mib), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				o, err := c.Minio().GetObject(bg, "bench", key, minio.GetObjectOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(o, buf.Bytes()); err != nil {
					b.Fatal(err)
				}
				o.Close()
			}
		})
		buf.Close()
	}
}
