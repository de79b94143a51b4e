// SPDX-License-Identifier: MIT

//go:build hipobj_ceph

package miniordma

// The Ceph lane's Go case (tests/ceph/cases/c50_go_bridge.sh runs this
// package's test binary, built with -tags "hipobj_ceph hipobj_fabric"):
// the bridge through hipobj-gateway in front of a real Ceph RGW on this
// host. The gateway has no RDMA here, so each token request (the fabric
// build sends them) is declined and the bytes go by minio-go's HTTP
// through the gateway; every object is read back through the gateway and
// straight from RGW, byte-identical.

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func TestCephGateway(t *testing.T) {
	gw, rgw := os.Getenv("HIPOBJ_GO_GW"), os.Getenv("S3_ENDPOINT")
	if gw == "" || rgw == "" {
		t.Skip("HIPOBJ_GO_GW and S3_ENDPOINT are not set (the Ceph case sets them)")
	}
	region := os.Getenv("AWS_DEFAULT_REGION")
	direct, err := New(strings.TrimPrefix(rgw, "http://"), &Options{NoRDMA: true,
		Region: region, Creds: credentials.NewStaticV4(os.Getenv("AWS_ACCESS_KEY_ID"),
			os.Getenv("AWS_SECRET_ACCESS_KEY"), "")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(strings.TrimPrefix(gw, "http://"), &Options{PartSize: 5 << 20,
		Region: region, Creds: credentials.NewStaticV4(os.Getenv("HIPOBJ_GO_GWKEY"),
			os.Getenv("HIPOBJ_GO_GWSECRET"), "")})
	if err != nil {
		t.Fatal(err)
	}
	if err := direct.Minio().MakeBucket(ctx(t), "gobridge", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{3000001, 17<<20 + 3} {
		data := pattern(n, int64(300+i))
		b := buffer(t, n)
		copy(b.Bytes(), data)
		key := []string{"single", "multi"}[i]
		r, err := c.PutObject(ctx(t), "gobridge", key, b, 0, int64(n), PutOptions{})
		if err != nil {
			t.Fatalf("PUT %s through the gateway: %v", key, err)
		}
		wantFallback(t, "PUT "+key, r)
		if i == 1 && r.PartsHTTP != 4 {
			t.Fatalf("multipart: %+v, want 4 parts", r)
		}
		g := buffer(t, n)
		if r, err = c.GetObject(ctx(t), "gobridge", key, g, 0, GetOptions{}); err != nil {
			t.Fatalf("GET %s through the gateway: %v", key, err)
		}
		wantFallback(t, "GET "+key, r)
		if !bytes.Equal(g.Bytes(), data) {
			t.Fatalf("GET %s through the gateway: the bytes differ", key)
		}
		copy(g.Bytes(), make([]byte, n))
		if _, err = c.GetObject(ctx(t), "gobridge", key, g, 1,
			GetOptions{Offset: 999, Length: 100000}); err != nil {
			t.Fatalf("ranged GET %s: %v", key, err)
		}
		if !bytes.Equal(g.Bytes()[1:100001], data[999:100999]) {
			t.Fatalf("ranged GET %s: the bytes differ", key)
		}
		o, err := direct.Minio().GetObject(context.Background(), "gobridge", key,
			minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(o)
		o.Close()
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("%s straight from RGW: %v, or the bytes differ", key, err)
		}
	}
	_, err = c.GetObject(ctx(t), "gobridge", "missing", buffer(t, 10), 0, GetOptions{Length: 10})
	wantCode(t, "missing key through the gateway", err, "NoSuchKey")
}
