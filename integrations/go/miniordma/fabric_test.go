// SPDX-License-Identifier: MIT

package miniordma

import (
	"bytes"
	"errors"
	"strings"
	"testing"

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

	big := pattern(12<<20+3, 11)
	mb := buffer(t, len(big))
	copy(mb.Bytes(), big)
	if r, err = c.PutObject(ctx(t), "fab", "multi", mb, 0, int64(len(big)),
		PutOptions{}); err != nil {
		t.Fatalf("multipart: %#v", err)
	}
	if !r.RDMA || r.PartsRDMA != 3 || r.ETag == "" {
		t.Fatalf("multipart: %+v", r)
	}
	k2 := gofabric.Read()
	if k2.RdmaPut-k1.RdmaPut != 3 || k2.ListParts == k1.ListParts ||
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
