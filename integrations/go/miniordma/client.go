// SPDX-License-Identifier: MIT

package miniordma

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"hipobject.org/go/hipobj"
)

// Errors the bridge adds to minio-go's (S3 errors stay minio.ErrorResponse
// values: minio.ToErrorResponse(err).Code is "NoSuchKey" and so on).
var (
	// ErrNoRDMA: RequireRDMA and no hipObject instance (no RDMA device).
	ErrNoRDMA = errors.New("RDMA required but hipObject is not initialized")
	// ErrDeclined: RequireRDMA and the server answered 501.
	ErrDeclined = errors.New("the server declined RDMA (x-amz-rdma-reply: 501)")
	// ErrNoReply: a 2xx answer without x-amz-rdma-reply: the server
	// ignored the token. Never a success; for a PUT the server may have
	// stored an empty object.
	ErrNoReply = errors.New("the server answered a token request without " +
		"x-amz-rdma-reply: it ignored the token")
	// ErrBadCount: x-amz-rdma-bytes-transferred differs from the size.
	ErrBadCount = errors.New("x-amz-rdma-bytes-transferred is not the transfer's size")
	// ErrNoStage: a device buffer's HTTP fallback needs Options.Stage.
	ErrNoStage = errors.New("HTTP fallback into device memory needs Options.Stage")
)

// Stage copies between a device buffer and host memory for the HTTP
// fallback, with the application's GPU runtime (the bridge never touches
// device memory with the CPU).
type Stage interface {
	ToDevice(ctx context.Context, buf *hipobj.Buffer, off int, p []byte) error
	FromDevice(ctx context.Context, buf *hipobj.Buffer, off int, p []byte) error
}

// Options configure a Client; minio-go's own options are taken as they are.
type Options struct {
	Creds     *credentials.Credentials // nil: anonymous
	Secure    bool
	Region    string // default us-east-1 (no GetBucketLocation round trip)
	Transport http.RoundTripper
	// RequireRDMA: never fall back to HTTP (ErrNoRDMA, ErrDeclined).
	RequireRDMA bool
	// NoRDMA: plain minio-go transfers only.
	NoRDMA bool
	// PartSize: objects above it are uploaded in parts of this size
	// (default 64 MiB, at least 5 MiB as S3 asks).
	PartSize int64
	// Parallel: parts uploaded at once (default 4), each on its own
	// connection (the library keeps HIPOBJ_MAX_TRANSFERS).
	Parallel int
	Stage    Stage
}

// Client is minio-go's client and the bridge's token requests to the same
// endpoint with the same credentials.
type Client struct {
	mc     *minio.Client
	core   *minio.Core
	base   *url.URL
	hc     *http.Client
	creds  *credentials.Credentials
	region string
	opt    Options
}

// New connects to endpoint ("host:port", as minio.New).
func New(endpoint string, opts *Options) (*Client, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Creds == nil {
		o.Creds = credentials.NewStaticV4("", "", "")
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.PartSize == 0 {
		o.PartSize = 64 << 20
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.PartSize < 5<<20 {
		return nil, fmt.Errorf("PartSize %d is below S3's 5 MiB", o.PartSize)
	}
	if o.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 16
		o.Transport = t
	}
	mo := &minio.Options{Creds: o.Creds, Secure: o.Secure, Region: o.Region,
		Transport: o.Transport, BucketLookup: minio.BucketLookupPath}
	core, err := minio.NewCore(endpoint, mo)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if o.Secure {
		scheme = "https"
	}
	base, err := url.Parse(scheme + "://" + strings.TrimSuffix(endpoint, "/"))
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: o.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	return &Client{mc: core.Client, core: core, base: base, hc: hc,
		creds: o.Creds, region: o.Region, opt: o}, nil
}

// Minio is the minio-go client underneath, for everything else.
func (c *Client) Minio() *minio.Client { return c.mc }

// Result says how a transfer went.
type Result struct {
	Size      int64  // payload bytes moved
	RDMA      bool   // every byte moved by RDMA
	PartsRDMA int    // parts (or 1 for a single request) moved by RDMA
	PartsHTTP int    // ... by minio-go's HTTP transfer
	Fallback  string // why HTTP was used, "" when it was not
	ETag      string // PUT: the object's ETag, when known
}

func (r *Result) add(rdma bool, why string) {
	if rdma {
		r.PartsRDMA++
	} else {
		r.PartsHTTP++
		if r.Fallback == "" {
			r.Fallback = why
		}
	}
	r.RDMA = r.PartsHTTP == 0
}

// rdmaUp says whether transfers may use RDMA: an instance, a registered
// buffer and no NoRDMA.
func (c *Client) rdmaUp(buf *hipobj.Buffer) (bool, error) {
	if c.opt.NoRDMA {
		if c.opt.RequireRDMA {
			return false, ErrNoRDMA
		}
		return false, nil
	}
	in, err := hipobj.GetInfo()
	if err != nil {
		return false, err
	}
	up := in.Initialized && buf.Registered()
	if !up && c.opt.RequireRDMA {
		return false, ErrNoRDMA
	}
	return up, nil
}
