// SPDX-License-Identifier: MIT

package miniordma

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"hipobject.org/go/hipobj"
	"hipobject.org/go/internal/gofabric"
)

// fabricClient is a bridge to the in-process S3 responder whose RDMA side
// is the reference engine on the simulated fabric (hipobj_fabric build).
func fabricClient(t *testing.T, o Options) *Client {
	t.Helper()
	if !gofabric.Available {
		t.Skip("needs the simulated fabric: go test -tags hipobj_fabric " +
			"(integrations/go/run.sh)")
	}
	gofabric.SetMode(gofabric.Normal)
	t.Cleanup(func() { gofabric.SetMode(gofabric.Normal) })
	c, err := New(strings.TrimPrefix(fabricURL, "http://"), &o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// GET, a ranged GET, PUT and a multipart upload whose parts all move by
// RDMA: the responder's counters say so, and the bytes match.
func TestFabricRDMA(t *testing.T) {
	c := fabricClient(t, Options{PartSize: 5 << 20, RequireRDMA: true})
	k0 := gofabric.Read()
	data := pattern(300<<10+7, 10)
	b := buffer(t, len(data))
	copy(b.Bytes(), data)
	r, err := c.PutObject(ctx(t), "fab", "obj", b, 0, int64(len(data)), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.RDMA || r.PartsRDMA != 1 || r.Fallback != "" {
		t.Fatalf("PUT: %+v", r)
	}
	g := buffer(t, len(data)+16)
	if r, err = c.GetObject(ctx(t), "fab", "obj", g, 16-7, GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if !r.RDMA || !bytes.Equal(g.Bytes()[9:9+len(data)], data) {
		t.Fatalf("GET: %+v, or the bytes differ", r)
	}
	if r, err = c.GetObject(ctx(t), "fab", "obj", g, 0,
		GetOptions{Offset: 4097, Length: 70000}); err != nil || !r.RDMA {
		t.Fatalf("ranged GET: %+v %v", r, err)
	}
	if !bytes.Equal(g.Bytes()[:70000], data[4097:4097+70000]) {
		t.Fatal("ranged GET: the bytes differ")
	}
	k1 := gofabric.Read()
	if k1.RdmaPut-k0.RdmaPut != 1 || k1.RdmaGet-k0.RdmaGet != 2 ||
		k1.HTTPGet != k0.HTTPGet || k1.HTTPPut != k0.HTTPPut ||
		k1.RdmaBytes-k0.RdmaBytes != uint64(2*len(data)+70000) {
		t.Fatalf("counters: before %+v after %+v", k0, k1)
	}

	big := pattern(22<<20+3, 11)
	mb := buffer(t, len(big))
	copy(mb.Bytes(), big)
	if r, err = c.PutObject(ctx(t), "fab", "multi", mb, 0, int64(len(big)),
		PutOptions{}); err != nil {
		t.Fatalf("multipart: %#v", err)
	}
	if !r.RDMA || r.PartsRDMA != 5 || r.ETag == "" {
		t.Fatalf("multipart: %+v", r)
	}
	k2 := gofabric.Read()
	if k2.RdmaPut-k1.RdmaPut != 5 || k2.ListParts == k1.ListParts ||
		k2.Completes-k1.Completes != 1 || k2.OpenUploads != 0 {
		t.Fatalf("multipart counters: before %+v after %+v", k1, k2)
	}
	mg := buffer(t, len(big))
	if r, err = c.GetObject(ctx(t), "fab", "multi", mg, 0, GetOptions{}); err != nil || !r.RDMA {
		t.Fatalf("GET multipart: %+v %v", r, err)
	}
	if !bytes.Equal(mg.Bytes(), big) {
		t.Fatal("multipart: the bytes read back differ")
	}
}

// A server that declines: minio-go's HTTP transfer into the same buffer.
func TestFabricDecline(t *testing.T) {
	c := fabricClient(t, Options{PartSize: 5 << 20})
	data := pattern(100000, 12)
	b := buffer(t, len(data))
	copy(b.Bytes(), data)
	gofabric.SetMode(gofabric.Decline)
	k0 := gofabric.Read()
	r, err := c.PutObject(ctx(t), "fab", "declined", b, 0, int64(len(data)), PutOptions{})
	if err != nil || r.RDMA || !strings.Contains(r.Fallback, "501") {
		t.Fatalf("PUT: %+v %v", r, err)
	}
	g := buffer(t, len(data))
	if r, err = c.GetObject(ctx(t), "fab", "declined", g, 0, GetOptions{}); err != nil || r.RDMA {
		t.Fatalf("GET: %+v %v", r, err)
	}
	if !bytes.Equal(g.Bytes(), data) {
		t.Fatal("the bytes differ")
	}
	k1 := gofabric.Read()
	if k1.Declined-k0.Declined != 2 || k1.HTTPPut-k0.HTTPPut != 1 ||
		k1.HTTPGet-k0.HTTPGet != 1 || k1.RdmaBytes != k0.RdmaBytes {
		t.Fatalf("counters: before %+v after %+v", k0, k1)
	}
	rc := fabricClient(t, Options{RequireRDMA: true})
	gofabric.SetMode(gofabric.Decline)
	if _, err := rc.GetObject(ctx(t), "fab", "declined", g, 0, GetOptions{}); !errors.Is(err, ErrDeclined) {
		t.Fatalf("RequireRDMA: %v", err)
	}
}

// Servers that misbehave are never taken for success.
func TestFabricMisbehaving(t *testing.T) {
	c := fabricClient(t, Options{})
	data := pattern(50000, 13)
	b := buffer(t, len(data))
	copy(b.Bytes(), data)
	if _, err := c.PutObject(ctx(t), "fab", "m", b, 0, int64(len(data)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	if err := hipobj.SetLogger(func(l hipobj.LogLevel, m string) {
		mu.Lock()
		lines = append(lines, m)
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := hipobj.SetLogger(nil); err != nil {
			t.Error(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(strings.Join(lines, "\n"), "without an RC peer token") {
			t.Errorf("the logger did not get the library's warning: %q", lines)
		}
	}()
	cases := []struct {
		mode int
		want error
	}{
		{gofabric.Ignore, ErrNoReply},
		{gofabric.BadCount, ErrBadCount},
		{gofabric.PlainReply, nil},
	}
	for _, tc := range cases {
		gofabric.SetMode(tc.mode)
		_, gerr := c.GetObject(ctx(t), "fab", "m", b, 0, GetOptions{Length: int64(len(data))})
		_, perr := c.PutObject(ctx(t), "fab", "m2", b, 0, int64(len(data)), PutOptions{})
		for _, err := range []error{gerr, perr} {
			if err == nil {
				t.Fatalf("mode %d: success", tc.mode)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("mode %d: %v, want %v", tc.mode, err, tc.want)
			}
		}
	}
}

// Goroutines at once, each with its own buffer: every GET by RDMA and
// right (the callbacks of concurrent transfers reach their own state).
func TestFabricConcurrent(t *testing.T) {
	c := fabricClient(t, Options{RequireRDMA: true})
	data := pattern(1<<20, 14)
	b := buffer(t, len(data))
	copy(b.Bytes(), data)
	if _, err := c.PutObject(ctx(t), "fab", "conc", b, 0, int64(len(data)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 12, 4
	bufs := make([]*hipobj.Buffer, workers)
	for i := range bufs {
		bufs[i] = buffer(t, 64<<10)
	}
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			for r := 0; r < rounds; r++ {
				off := int64((w*rounds + r) * 16384)
				g := bufs[w]
				_, err := c.GetObject(ctx(t), "fab", "conc", g, 0,
					GetOptions{Offset: off, Length: 65536})
				if err == nil && !bytes.Equal(g.Bytes(), data[off:off+65536]) {
					err = fmt.Errorf("worker %d round %d: the bytes differ", w, r)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A context that is already done: nothing is sent.
func TestFabricCancelled(t *testing.T) {
	c := fabricClient(t, Options{})
	b := buffer(t, 4096)
	k0 := gofabric.Read()
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.GetObject(cctx, "fab", "conc", b, 0, GetOptions{Length: 4096})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("GET with a cancelled context: %v", err)
	}
	_, err = c.PutObject(cctx, "fab", "never", b, 0, 4096, PutOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PUT with a cancelled context: %v", err)
	}
	if k1 := gofabric.Read(); k1 != k0 {
		t.Fatalf("a request reached the server: %+v -> %+v", k0, k1)
	}
}

// Multipart uploads, parts in parallel: a declining server gets every
// part by HTTP (bytes compared), and a server that ignores the token
// fails the upload, which is aborted (no upload left open).
func TestFabricMultipartDeclineAndAbort(t *testing.T) {
	c := fabricClient(t, Options{PartSize: 5 << 20, Parallel: 3})
	big := pattern(16<<20+9, 15)
	b := buffer(t, len(big))
	copy(b.Bytes(), big)
	gofabric.SetMode(gofabric.Decline)
	r, err := c.PutObject(ctx(t), "fab", "mdecl", b, 0, int64(len(big)), PutOptions{})
	if err != nil || r.RDMA || r.PartsHTTP != 4 || !strings.Contains(r.Fallback, "501") {
		t.Fatalf("declined multipart: %+v %v", r, err)
	}
	gofabric.SetMode(gofabric.Normal)
	g := buffer(t, len(big))
	if _, err := c.GetObject(ctx(t), "fab", "mdecl", g, 0, GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g.Bytes(), big) {
		t.Fatal("declined multipart: the bytes differ")
	}
	k0 := gofabric.Read()
	gofabric.SetMode(gofabric.Ignore)
	_, err = c.PutObject(ctx(t), "fab", "mign", b, 0, int64(len(big)), PutOptions{})
	if !errors.Is(err, ErrNoReply) {
		t.Fatalf("ignored tokens: %v, want ErrNoReply", err)
	}
	k1 := gofabric.Read()
	if k1.Aborts-k0.Aborts != 1 || k1.OpenUploads != 0 || k1.Completes != k0.Completes {
		t.Fatalf("the failed upload was not aborted: %+v -> %+v", k0, k1)
	}
}

// abortFirst is a part's token request whose upload is aborted after the
// server's answer, before the client's ready: the server moves the part
// and cannot commit it.
type abortFirst struct {
	*tokenReq
	abort func()
}

func (a abortFirst) RecvReply(ctx context.Context) (string, error) {
	a.abort()
	return a.tokenReq.RecvReply(ctx)
}

// A part whose upload is gone fails at once, never at the client's
// transfer timeout (5 s): refused before any transfer (404 NoSuchUpload,
// as hipobj-gateway relays its store's refusal), the S3 error comes back
// and the token ends; ended while the part moves (another part's failure
// aborted the upload: t50 through the gateway), the server's final says
// the commit failed. Either way the next transfer goes by RDMA.
func TestFabricUploadGone(t *testing.T) {
	c := fabricClient(t, Options{PartSize: 5 << 20, RequireRDMA: true})
	const n = 300 << 10
	data := pattern(n, 17)
	b := buffer(t, n)
	copy(b.Bytes(), data)
	const quick = 2 * time.Second
	up := &upload{c: c, bucket: "fab", key: "gone", id: "up999999", buf: b, rdma: true}
	t0 := time.Now()
	_, _, _, err := up.part(ctx(t), 1, 0, n)
	if minio.ToErrorResponse(err).Code != "NoSuchUpload" {
		t.Fatalf("token UploadPart to no upload: %v, want NoSuchUpload", err)
	}
	if d := time.Since(t0); d > quick {
		t.Fatalf("NoSuchUpload came after %v", d)
	}

	id, err := c.core.NewMultipartUpload(ctx(t), "fab", "gone", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k0 := gofabric.Read()
	q := url.Values{}
	q.Set("partNumber", "1")
	q.Set("uploadId", id)
	r := &tokenReq{c: c, method: http.MethodPut, bucket: "fab", key: "gone",
		query: q, size: n}
	ops := abortFirst{r, func() {
		if err := c.core.AbortMultipartUpload(ctx(t), "fab", "gone", id); err != nil {
			t.Error(err)
		}
	}}
	t0 = time.Now()
	err = b.Put(ctx(t), hipobj.Transfer{Size: n, Peer: c.base.String(), Ops: ops})
	if err == nil || r.status != http.StatusOK {
		t.Fatalf("a part whose upload was aborted as it moved: %v (HTTP %d)", err, r.status)
	}
	if d := time.Since(t0); d > quick {
		t.Fatalf("the failed commit was reported after %v", d)
	}
	if k1 := gofabric.Read(); k1.Aborts-k0.Aborts != 1 || k1.OpenUploads != k0.OpenUploads-1 {
		t.Fatalf("counters %+v -> %+v", k0, k1)
	}

	res, err := c.PutObject(ctx(t), "fab", "after", b, 0, n, PutOptions{})
	if err != nil || !res.RDMA {
		t.Fatalf("PUT after the failures: %+v %v", res, err)
	}
}

// stage is Options.Stage for "device" memory that is really C memory
// (gofabric.Malloc): the copies a GPU runtime would make, counted.
type stage struct {
	mem         []byte
	to, fromDev int
}

func (s *stage) ToDevice(_ context.Context, _ *hipobj.Buffer, off int, p []byte) error {
	s.to++
	copy(s.mem[off:], p)
	return nil
}

func (s *stage) FromDevice(_ context.Context, _ *hipobj.Buffer, off int, p []byte) error {
	s.fromDev++
	copy(p, s.mem[off:])
	return nil
}

// A device buffer: RDMA straight into it; on a decline, the HTTP bytes go
// through Options.Stage (never through Bytes, which is nil), and without a
// Stage the fallback is ErrNoStage.
func TestFabricDeviceBuffer(t *testing.T) {
	c := fabricClient(t, Options{})
	const n = 200000
	p := gofabric.Malloc(n)
	defer gofabric.Free(p)
	dev, err := hipobj.RegisterDevice(p, n)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if !dev.Device() || dev.Bytes() != nil {
		t.Fatal("a device buffer with a host view")
	}
	mem := gofabric.View(p, n)
	data := pattern(n, 16)
	copy(mem, data)
	if r, err := c.PutObject(ctx(t), "fab", "dev", dev, 0, n, PutOptions{}); err != nil || !r.RDMA {
		t.Fatalf("PUT from the device buffer: %+v %v", r, err)
	}
	copy(mem, make([]byte, n))
	if r, err := c.GetObject(ctx(t), "fab", "dev", dev, 0, GetOptions{}); err != nil || !r.RDMA {
		t.Fatalf("GET into the device buffer: %+v %v", r, err)
	}
	if !bytes.Equal(mem, data) {
		t.Fatal("RDMA GET into the device buffer: the bytes differ")
	}
	gofabric.SetMode(gofabric.Decline)
	if _, err := c.GetObject(ctx(t), "fab", "dev", dev, 0, GetOptions{}); !errors.Is(err, ErrNoStage) {
		t.Fatalf("declined GET without a Stage: %v, want ErrNoStage", err)
	}
	st := &stage{mem: mem}
	sc := fabricClient(t, Options{Stage: st})
	gofabric.SetMode(gofabric.Decline)
	copy(mem, make([]byte, n))
	if r, err := sc.GetObject(ctx(t), "fab", "dev", dev, 0, GetOptions{}); err != nil || r.RDMA {
		t.Fatalf("declined GET with a Stage: %+v %v", r, err)
	}
	if !bytes.Equal(mem, data) || st.to != 1 {
		t.Fatalf("declined GET: bytes differ, or %d copies to the device", st.to)
	}
	if r, err := sc.PutObject(ctx(t), "fab", "dev2", dev, 0, n, PutOptions{}); err != nil || r.RDMA {
		t.Fatalf("declined PUT with a Stage: %+v %v", r, err)
	}
	if st.fromDev != 1 {
		t.Fatalf("%d copies from the device", st.fromDev)
	}
}
