// SPDX-License-Identifier: MIT

package miniordma

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"hipobject.org/go/hipobj"
)

// GetOptions choose what to read.
type GetOptions struct {
	Offset int64 // the object's first byte to read
	// Length to read; 0: to the end of the object (one HEAD first to
	// learn its size; its ETag then guards both paths with If-Match).
	Length int64
	// ETag: read only this version (If-Match), or "".
	ETag string
}

// GetObject reads an object, or a range of it, into buf at bufOff: by
// RDMA, or on a decline by minio-go's GetObject into the same buffer.
func (c *Client) GetObject(ctx context.Context, bucket, key string,
	buf *hipobj.Buffer, bufOff int, o GetOptions) (Result, error) {
	var res Result
	rdma, err := c.rdmaUp(buf)
	if err != nil {
		return res, err
	}
	if o.Offset < 0 || o.Length < 0 {
		return res, fmt.Errorf("negative offset or length")
	}
	etag := o.ETag
	n := o.Length
	if n == 0 {
		st, err := c.mc.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
		if err != nil {
			return res, err
		}
		if o.Offset > st.Size || (o.Offset == st.Size && st.Size > 0) {
			return res, minio.ErrorResponse{StatusCode: http.StatusRequestedRangeNotSatisfiable,
				Code: "InvalidRange", Message: "The requested range is not satisfiable",
				BucketName: bucket, Key: key}
		}
		n = st.Size - o.Offset
		if etag == "" {
			etag = st.ETag
		}
		if n == 0 {
			return res, nil // an empty object: nothing to move
		}
	}
	if bufOff < 0 || n > int64(buf.Len()-bufOff) {
		return res, fmt.Errorf("%d bytes do not fit at %d in a buffer of %d",
			n, bufOff, buf.Len())
	}
	why := "no hipObject instance (no RDMA device)"
	if c.opt.NoRDMA {
		why = "NoRDMA"
	}
	if rdma {
		h := http.Header{}
		h.Set("Range", fmt.Sprintf("bytes=%d-%d", o.Offset, o.Offset+n-1))
		if etag != "" {
			h.Set("If-Match", quote(etag))
		}
		r := &tokenReq{c: c, method: http.MethodGet, bucket: bucket, key: key,
			header: h, size: int(n)}
		out, reason, err := c.run(ctx, r, buf, bufOff, true)
		if err != nil {
			return res, err
		}
		if out == moved {
			res.Size = n
			res.add(true, "")
			return res, nil
		}
		why = reason
	}
	if err := c.httpGet(ctx, bucket, key, buf, bufOff, o.Offset, n, etag); err != nil {
		return res, err
	}
	res.Size = n
	res.add(false, why)
	return res, nil
}

func quote(etag string) string {
	if len(etag) > 0 && etag[0] == '"' {
		return etag
	}
	return `"` + etag + `"`
}

// httpGet is minio-go's GetObject of exactly n bytes into the buffer.
func (c *Client) httpGet(ctx context.Context, bucket, key string,
	buf *hipobj.Buffer, bufOff int, off, n int64, etag string) error {
	var gopt minio.GetObjectOptions
	if err := gopt.SetRange(off, off+n-1); err != nil {
		return err
	}
	if etag != "" {
		if err := gopt.SetMatchETag(etag); err != nil {
			return err
		}
	}
	body, _, _, err := c.core.GetObject(ctx, bucket, key, gopt)
	if err != nil {
		return err
	}
	defer body.Close()
	var dst []byte
	if buf.Device() {
		if c.opt.Stage == nil {
			return ErrNoStage
		}
		dst = make([]byte, n)
	} else {
		dst = buf.Bytes()[bufOff : bufOff+int(n)]
	}
	if _, err := io.ReadFull(body, dst); err != nil {
		return fmt.Errorf("GET %s/%s: %d bytes expected: %w", bucket, key, n, err)
	}
	var one [1]byte
	if k, _ := body.Read(one[:]); k != 0 {
		return fmt.Errorf("GET %s/%s: more than the %d bytes asked for", bucket, key, n)
	}
	if buf.Device() {
		return c.opt.Stage.ToDevice(ctx, buf, bufOff, dst)
	}
	return nil
}

// PutOptions describe an upload.
type PutOptions struct {
	ContentType string
}

// PutObject stores size bytes of buf at bufOff as the object: in one
// request up to Options.PartSize, else as a multipart upload, each part
// by RDMA or, on a decline, by minio-go's HTTP upload.
func (c *Client) PutObject(ctx context.Context, bucket, key string,
	buf *hipobj.Buffer, bufOff int, size int64, o PutOptions) (Result, error) {
	res := Result{}
	rdma, err := c.rdmaUp(buf)
	if err != nil {
		return res, err
	}
	if size <= 0 || bufOff < 0 || size > int64(buf.Len()-bufOff) {
		return res, fmt.Errorf("%d bytes at %d: not within a buffer of %d",
			size, bufOff, buf.Len())
	}
	if size > c.opt.PartSize {
		return c.putMultipart(ctx, bucket, key, buf, bufOff, size, o, rdma)
	}
	why := "no hipObject instance (no RDMA device)"
	if c.opt.NoRDMA {
		why = "NoRDMA"
	}
	if rdma {
		h := http.Header{}
		if o.ContentType != "" {
			h.Set("Content-Type", o.ContentType)
		}
		r := &tokenReq{c: c, method: http.MethodPut, bucket: bucket, key: key,
			header: h, size: int(size)}
		out, reason, err := c.run(ctx, r, buf, bufOff, false)
		if err != nil {
			return res, err
		}
		if out == moved {
			res.Size = size
			res.ETag = trimETag(r.respHdr.Get("ETag"))
			res.add(true, "")
			return res, nil
		}
		why = reason
	}
	data, err := c.hostBytes(ctx, buf, bufOff, size)
	if err != nil {
		return res, err
	}
	info, err := c.core.PutObject(ctx, bucket, key, bytes.NewReader(data), size,
		"", "", minio.PutObjectOptions{ContentType: o.ContentType})
	if err != nil {
		return res, err
	}
	res.Size = size
	res.ETag = info.ETag
	res.add(false, why)
	return res, nil
}

func trimETag(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// hostBytes is the payload in host memory for an HTTP upload: the
// buffer itself, or a copy out of device memory through Stage.
func (c *Client) hostBytes(ctx context.Context, buf *hipobj.Buffer, off int,
	n int64) ([]byte, error) {
	if !buf.Device() {
		return buf.Bytes()[off : off+int(n)], nil
	}
	if c.opt.Stage == nil {
		return nil, ErrNoStage
	}
	p := make([]byte, n)
	if err := c.opt.Stage.FromDevice(ctx, buf, off, p); err != nil {
		return nil, err
	}
	return p, nil
}

// putMultipart uploads parts of PartSize, Options.Parallel at a time, RDMA
// first; after a decline the parts not yet started go by HTTP at once.
// Any failure stops the others and aborts the upload.
func (c *Client) putMultipart(ctx context.Context, bucket, key string,
	buf *hipobj.Buffer, bufOff int, size int64, o PutOptions,
	rdma bool) (res Result, err error) {
	id, err := c.core.NewMultipartUpload(ctx, bucket, key,
		minio.PutObjectOptions{ContentType: o.ContentType})
	if err != nil {
		return res, err
	}
	defer func() {
		if err != nil {
			actx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = c.core.AbortMultipartUpload(actx, bucket, key, id)
			res = Result{}
		}
	}()
	up := &upload{c: c, bucket: bucket, key: key, id: id, buf: buf, rdma: rdma,
		why: "no hipObject instance (no RDMA device)"}
	if c.opt.NoRDMA {
		up.why = "NoRDMA"
	}
	count := int((size + c.opt.PartSize - 1) / c.opt.PartSize)
	parts := make([]minio.CompletePart, count)
	byRDMA := make([]bool, count)
	reasons := make([]string, count)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, c.opt.Parallel)
	for w := 0; w < c.opt.Parallel; w++ {
		go func() {
			for i := range next {
				off := int64(i) * c.opt.PartSize
				n := size - off
				if n > c.opt.PartSize {
					n = c.opt.PartSize
				}
				p, viaRDMA, why, err := up.part(pctx, i+1, bufOff+int(off), n)
				if err != nil {
					cancel()
					errs <- fmt.Errorf("part %d: %w", i+1, err)
					for range next { // let the feeder finish
					}
					return
				}
				parts[i], byRDMA[i], reasons[i] = p, viaRDMA, why
			}
			errs <- nil
		}()
	}
feed:
	for i := 0; i < count; i++ {
		select {
		case next <- i:
		case <-pctx.Done():
			break feed
		}
	}
	close(next)
	for w := 0; w < c.opt.Parallel; w++ {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return res, err
	}
	needList := false
	for i := range parts {
		res.add(byRDMA[i], reasons[i])
		needList = needList || parts[i].ETag == ""
	}
	if needList {
		if err := c.partETags(ctx, bucket, key, id, parts); err != nil {
			return res, err
		}
	}
	etag, err := c.core.CompleteMultipartUpload(ctx, bucket, key, id, parts,
		minio.PutObjectOptions{ContentType: o.ContentType})
	if err != nil {
		return res, err
	}
	res.Size = size
	res.ETag = etag
	return res, nil
}

// upload is a multipart upload's shared state: whether parts may still
// try RDMA (not after a decline), and why they may not.
type upload struct {
	c               *Client
	bucket, key, id string
	buf             *hipobj.Buffer
	mu              sync.Mutex
	rdma            bool
	why             string
}

func (u *upload) state() (bool, string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.rdma, u.why
}

// part moves one part: by RDMA while the server takes tokens, else by
// minio-go's PutObjectPart. The ETag of an RDMA part is "" (ListParts).
func (u *upload) part(ctx context.Context, num, at int, n int64) (minio.CompletePart, bool, string, error) {
	c := u.c
	rdma, why := u.state()
	if rdma {
		q := url.Values{}
		q.Set("partNumber", strconv.Itoa(num))
		q.Set("uploadId", u.id)
		r := &tokenReq{c: c, method: http.MethodPut, bucket: u.bucket, key: u.key,
			query: q, size: int(n)}
		out, reason, err := c.run(ctx, r, u.buf, at, false)
		if err != nil {
			return minio.CompletePart{}, false, "", err
		}
		if out == moved {
			et := trimETag(r.respHdr.Get("ETag"))
			return minio.CompletePart{PartNumber: num, ETag: et}, true, "", nil
		}
		u.mu.Lock()
		if u.rdma {
			u.rdma, u.why = false, reason
		}
		u.mu.Unlock()
		why = reason
	}
	data, err := c.hostBytes(ctx, u.buf, at, n)
	if err != nil {
		return minio.CompletePart{}, false, "", err
	}
	p, err := c.core.PutObjectPart(ctx, u.bucket, u.key, u.id, num,
		bytes.NewReader(data), n, "", "", nil)
	if err != nil {
		return minio.CompletePart{}, false, "", err
	}
	return minio.CompletePart{PartNumber: num, ETag: p.ETag}, false, why, nil
}

// partETags fills the ETags an RDMA part's answer could not carry (the
// server answers before the bytes move) from ListParts.
func (c *Client) partETags(ctx context.Context, bucket, key, id string,
	parts []minio.CompletePart) error {
	byNum := map[int]*minio.CompletePart{}
	for i := range parts {
		byNum[parts[i].PartNumber] = &parts[i]
	}
	marker := 0
	for {
		l, err := c.core.ListObjectParts(ctx, bucket, key, id, marker, 1000)
		if err != nil {
			return err
		}
		for _, p := range l.ObjectParts {
			if cp := byNum[p.PartNumber]; cp != nil && cp.ETag == "" {
				cp.ETag = trimETag(p.ETag)
			}
		}
		if !l.IsTruncated {
			break
		}
		marker = l.NextPartNumberMarker
	}
	for _, p := range parts {
		if p.ETag == "" {
			return fmt.Errorf("part %d: not listed by ListParts", p.PartNumber)
		}
	}
	return nil
}
