// SPDX-License-Identifier: MIT

package miniordma

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"hipobject.org/go/hipobj"
	"hipobject.org/go/internal/gofabric"
)

var minioMakeOpts = minio.MakeBucketOptions{}

// fabricURL is the in-process S3 responder on the simulated fabric (the
// hipobj_fabric build), "" otherwise. In that build the hipObject
// instance is up (on the fabric's client NIC), so every transfer sends a
// token; hipobj-test-server, with no RDMA device here (or none that can
// reach the simulated NIC), declines each with 501.
var fabricURL string

func TestMain(m *testing.M) {
	if gofabric.Available {
		u, err := gofabric.Start()
		if err != nil {
			println(err.Error())
			os.Exit(1)
		}
		fabricURL = u
	}
	os.Exit(m.Run())
}

func pattern(n int, seed int64) []byte {
	p := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(p)
	return p
}

// buffer is a registered host buffer when an instance is up, else a
// plain one; closed at the end of the test.
func buffer(t *testing.T, n int) *hipobj.Buffer {
	t.Helper()
	b, err := hipobj.AllocHost(n)
	if errors.Is(err, hipobj.NotInitialized) {
		b, err = hipobj.AllocPlain(n)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// wantFallback checks a transfer went by HTTP for the reason this build
// expects: a 501 from the server (tokens sent), or no instance.
func wantFallback(t *testing.T, what string, r Result) {
	t.Helper()
	if r.RDMA || r.PartsHTTP == 0 {
		t.Fatalf("%s: %+v, want an HTTP fallback", what, r)
	}
	want := "no hipObject instance"
	if gofabric.Available {
		want = "HTTP 501, x-amz-rdma-reply: 501"
	}
	if !strings.Contains(r.Fallback, want) {
		t.Fatalf("%s: fallback %q, want %q", what, r.Fallback, want)
	}
}

// The bridge against hipobj-test-server with SigV4 on: PUT, GET, a ranged
// GET into the middle of the buffer and a multipart upload, every byte
// compared; by HTTP (the server declines RDMA here, or there is no
// instance), the declines counted by the server.
func TestFallbackRoundTrip(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{PartSize: 5 << 20, Parallel: 1})
	s.bucket(t, c, "gob")
	before := s.stats(t)

	data := pattern(1<<20+3, 1)
	b := buffer(t, len(data)+64)
	copy(b.Bytes(), data)
	r, err := c.PutObject(ctx(t), "gob", "one", b, 0, int64(len(data)), PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantFallback(t, "put", r)
	if r.ETag == "" {
		t.Fatal("no ETag")
	}

	g := buffer(t, len(data)+64)
	if r, err = c.GetObject(ctx(t), "gob", "one", g, 0, GetOptions{}); err != nil {
		t.Fatal(err)
	}
	wantFallback(t, "get", r)
	if r.Size != int64(len(data)) || !bytes.Equal(g.Bytes()[:len(data)], data) {
		t.Fatal("GET: the bytes differ")
	}

	g2 := buffer(t, 8192)
	if r, err = c.GetObject(ctx(t), "gob", "one", g2, 7,
		GetOptions{Offset: 1000, Length: 5000}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g2.Bytes()[7:5007], data[1000:6000]) || g2.Bytes()[6] != 0 ||
		g2.Bytes()[5007] != 0 {
		t.Fatal("ranged GET: wrong bytes, or bytes outside the range written")
	}

	big := pattern(11<<20+5, 2)
	mb := buffer(t, len(big))
	copy(mb.Bytes(), big)
	if r, err = c.PutObject(ctx(t), "gob", "multi", mb, 0, int64(len(big)),
		PutOptions{ContentType: "application/x-test"}); err != nil {
		t.Fatal(err)
	}
	wantFallback(t, "multipart", r)
	if r.PartsHTTP != 3 || !strings.HasSuffix(r.ETag, "-3") {
		t.Fatalf("multipart: %+v, want 3 parts and a multipart ETag", r)
	}
	mg := buffer(t, len(big))
	if _, err = c.GetObject(ctx(t), "gob", "multi", mg, 0, GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mg.Bytes(), big) {
		t.Fatal("multipart: the bytes read back differ")
	}

	after := s.stats(t)
	if gofabric.Available {
		// put, get, ranged get, the first part (the others go by HTTP at
		// once), the multipart object's get.
		if d := after.RDMA.Declined - before.RDMA.Declined; d != 5 {
			t.Fatalf("the server declined %d token requests, want 5", d)
		}
	}
	if after.RDMA.BytesIn != before.RDMA.BytesIn || after.RDMA.BytesOut != before.RDMA.BytesOut {
		t.Fatal("the server counts bytes moved by RDMA")
	}
	in := after.HTTP.BytesIn - before.HTTP.BytesIn
	out := after.HTTP.BytesOut - before.HTTP.BytesOut
	if in != int64(len(data)+len(big)) || out != int64(len(data)+5000+len(big)) {
		t.Fatalf("HTTP bytes in %d, out %d", in, out)
	}
	if after.AuthFailures != before.AuthFailures {
		t.Fatal("a request failed authentication: the token was not signed")
	}
}

// --require-rdma semantics: no fallback, ever.
func TestRequireRDMA(t *testing.T) {
	s := startServer(t, "--decline-rdma")
	c := s.client(t, Options{})
	s.bucket(t, c, "req")
	data := pattern(4096, 3)
	if _, err := c.Minio().PutObject(ctx(t), "req", "k", bytes.NewReader(data),
		int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	rc := s.client(t, Options{RequireRDMA: true})
	b := buffer(t, 4096)
	want := ErrNoRDMA
	if gofabric.Available {
		want = ErrDeclined
	}
	if _, err := rc.GetObject(ctx(t), "req", "k", b, 0, GetOptions{}); !errors.Is(err, want) {
		t.Fatalf("GET: %v, want %v", err, want)
	}
	if _, err := rc.PutObject(ctx(t), "req", "k2", b, 0, 4096, PutOptions{}); !errors.Is(err, want) {
		t.Fatalf("PUT: %v, want %v", err, want)
	}
	if _, err := rc.Minio().StatObject(ctx(t), "req", "k2", minio.StatObjectOptions{}); err == nil {
		t.Fatal("a refused PUT stored an object")
	}
	if !bytes.Equal(b.Bytes(), make([]byte, 4096)) {
		t.Fatal("a refused GET wrote the buffer")
	}
	nc := s.client(t, Options{NoRDMA: true, RequireRDMA: true})
	if _, err := nc.GetObject(ctx(t), "req", "k", b, 0, GetOptions{}); !errors.Is(err, ErrNoRDMA) {
		t.Fatalf("NoRDMA with RequireRDMA: %v", err)
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, code)
	}
	if got := minio.ToErrorResponse(err).Code; got != code {
		t.Fatalf("%s: %v (code %q), want %s", what, err, got, code)
	}
}

// S3 errors come back as minio-go's, on the token path as on HTTP.
func TestErrors(t *testing.T) {
	s := startServer(t)
	c := s.client(t, Options{})
	s.bucket(t, c, "errs")
	data := pattern(1000, 4)
	b := buffer(t, 4096)
	copy(b.Bytes(), data)
	if _, err := c.PutObject(ctx(t), "errs", "small", b, 0, 1000, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.GetObject(ctx(t), "errs", "missing", b, 0, GetOptions{})
	wantCode(t, "stat of a missing key", err, "NoSuchKey")
	_, err = c.GetObject(ctx(t), "errs", "missing", b, 0, GetOptions{Length: 10})
	wantCode(t, "GET of a missing key", err, "NoSuchKey")
	_, err = c.GetObject(ctx(t), "nobucket", "k", b, 0, GetOptions{Length: 10})
	wantCode(t, "GET in a missing bucket", err, "NoSuchBucket")
	_, err = c.PutObject(ctx(t), "nobucket", "k", b, 0, 10, PutOptions{})
	wantCode(t, "PUT in a missing bucket", err, "NoSuchBucket")
	_, err = c.GetObject(ctx(t), "errs", "small", b, 0, GetOptions{Offset: 5000, Length: 10})
	wantCode(t, "GET past the end", err, "InvalidRange")
	_, err = c.GetObject(ctx(t), "errs", "small", b, 0, GetOptions{Offset: 1000})
	wantCode(t, "GET from the end", err, "InvalidRange")

	anon := s.client(t, Options{Creds: credentials.NewStaticV4("", "", "")})
	_, err = anon.GetObject(ctx(t), "errs", "small", b, 0, GetOptions{Length: 10})
	wantCode(t, "anonymous GET", err, "AccessDenied")
	_, err = anon.PutObject(ctx(t), "errs", "anon", b, 0, 10, PutOptions{})
	wantCode(t, "anonymous PUT", err, "AccessDenied")
	bad := s.client(t, Options{Creds: credentials.NewStaticV4(testAK, "wrong", "")})
	_, err = bad.GetObject(ctx(t), "errs", "small", b, 0, GetOptions{Length: 10})
	wantCode(t, "wrong secret", err, "SignatureDoesNotMatch")
	if _, err := c.Minio().StatObject(ctx(t), "errs", "anon", minio.StatObjectOptions{}); err == nil {
		t.Fatal("an anonymous PUT stored an object")
	}
}
