// SPDX-License-Identifier: MIT

package miniordma

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
	"github.com/minio/minio-go/v7/pkg/signer"

	"hipobject.org/go/hipobj"
)

// The header names, lower-case as docs/protocol.md writes them.
const (
	hdrToken = "x-amz-rdma-token"
	hdrReply = "x-amz-rdma-reply"
	hdrBytes = "x-amz-rdma-bytes-transferred"
)

// tokenReq is one S3 request that carries a token: hipobj.Ops for the
// transfer, and what the server answered.
type tokenReq struct {
	c      *Client
	method string
	bucket string
	key    string
	query  url.Values
	header http.Header
	size   int

	sent     bool
	status   int
	reply    string
	hasReply bool
	respHdr  http.Header
	s3err    error // the answer's S3 error, when it was not a 2xx
}

// build makes the request, the token in its lower-case header, and signs
// it with the token among its signed headers.
func (r *tokenReq) build(ctx context.Context, token string) (*http.Request, error) {
	u := *r.c.base
	u.Path = "/" + r.bucket + "/" + r.key
	u.RawPath = "/" + s3utils.EncodePath(r.bucket) + "/" + s3utils.EncodePath(r.key)
	if r.query != nil {
		u.RawQuery = s3utils.QueryEncode(r.query)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), http.NoBody)
	if err != nil {
		return nil, err
	}
	req.ContentLength = 0
	for k, v := range r.header {
		req.Header[k] = v
	}
	// Set directly, not through Header.Set, so the name stays lower-case
	// on the wire; SigV4 lower-cases it in SignedHeaders either way.
	req.Header[hdrToken] = []string{token}
	if r.method == http.MethodGet {
		req.Header.Set("X-Amz-Content-Sha256",
			"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	} else {
		// The payload moves by RDMA: the server checks what it received
		// against nothing the client could hash without reading GPU
		// memory.
		req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	}
	v, err := r.c.creds.Get()
	if err != nil {
		return nil, err
	}
	if v.SignerType == credentials.SignatureAnonymous || v.AccessKeyID == "" {
		return req, nil
	}
	return signer.SignV4(*req, v.AccessKeyID, v.SecretAccessKey,
		v.SessionToken, r.c.region), nil
}

// SendRequest sends the request and reads the whole answer (an accepted
// one has no body; a 501's or an error's is S3's error document).
func (r *tokenReq) SendRequest(ctx context.Context, token string) error {
	req, err := r.build(ctx, token)
	if err != nil {
		return err
	}
	resp, err := r.c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	r.sent = true
	r.status = resp.StatusCode
	r.respHdr = resp.Header
	vals := resp.Header.Values(hdrReply)
	r.hasReply = len(vals) == 1
	if r.hasReply {
		r.reply = vals[0]
	}
	if len(vals) > 1 {
		return fmt.Errorf("%d x-amz-rdma-reply headers in one answer", len(vals))
	}
	if resp.StatusCode/100 != 2 {
		r.s3err = s3Error(resp, body, r.bucket, r.key)
		if !r.hasReply {
			return r.s3err // an S3 error: nothing to transfer
		}
		return nil // a decline or busy: its reply tells the library
	}
	if !r.hasReply {
		return ErrNoReply
	}
	if n := resp.Header.Get(hdrBytes); n != "" {
		if v, err := strconv.ParseUint(n, 10, 64); err != nil || v != uint64(r.size) {
			return fmt.Errorf("%w (%q for %d bytes)", ErrBadCount, n, r.size)
		}
	}
	return nil
}

// RecvReply hands the library the reply the answer carried.
func (r *tokenReq) RecvReply(ctx context.Context) (string, error) {
	if !r.hasReply {
		return "", ErrNoReply
	}
	return r.reply, nil
}

// s3Error is the answer's S3 error as minio-go reports them.
func s3Error(resp *http.Response, body []byte, bucket, key string) error {
	e := minio.ErrorResponse{}
	if len(body) > 0 && xml.Unmarshal(body, &e) == nil && e.Code != "" {
		e.StatusCode = resp.StatusCode
		return e
	}
	e = minio.ErrorResponse{StatusCode: resp.StatusCode, Code: resp.Status,
		Message: "no S3 error document", BucketName: bucket, Key: key}
	return e
}

// outcome is what a token request ended as.
type outcome int

const (
	moved    outcome = iota // every byte moved by RDMA
	declined                // 501 (or 503 busy): fall back to HTTP
)

// run moves one request's payload by RDMA through hipobj; a decline is
// reported (with the reason), every other failure is an error.
func (c *Client) run(ctx context.Context, r *tokenReq, buf *hipobj.Buffer,
	off int, get bool) (outcome, string, error) {
	t := hipobj.Transfer{Offset: off, Size: r.size, Peer: c.base.String(), Ops: r}
	var err error
	if get {
		err = buf.Get(ctx, t)
	} else {
		err = buf.Put(ctx, t)
	}
	if err == nil {
		if r.status != http.StatusOK && r.status != http.StatusPartialContent {
			return 0, "", fmt.Errorf("x-amz-rdma-reply with HTTP %d", r.status)
		}
		return moved, "", nil
	}
	var he *hipobj.Error
	if !errors.As(err, &he) {
		return 0, "", err
	}
	if he.Err != nil {
		return 0, "", he.Err // the callback's: an S3 error, ErrNoReply, ...
	}
	if he.Code == hipobj.S3Error && r.hasReply && r.status/100 != 2 {
		why := fmt.Sprintf("HTTP %d, x-amz-rdma-reply: %s", r.status, r.reply)
		if r.reply == "501" || r.reply == "503" {
			if c.opt.RequireRDMA {
				if r.reply == "501" {
					return 0, "", fmt.Errorf("%w: %v", ErrDeclined, r.s3err)
				}
				return 0, "", fmt.Errorf("RDMA required: %s: %v", why, r.s3err)
			}
			return declined, why, nil
		}
		return 0, "", fmt.Errorf("token request answered %s: %v", why, r.s3err)
	}
	return 0, "", err
}
