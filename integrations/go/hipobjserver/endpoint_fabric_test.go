// SPDX-License-Identifier: MIT

//go:build hipobj_fabric

package hipobjserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"hipobject.org/go/hipobj"
)

// endpoint is a small S3-like endpoint (test only) that serves GET and
// PUT of /KEY with x-amz-rdma-token through libhipobj_server on the
// simulated fabric: GETs from Go memory through Read, or from registered
// memory (Alloc) for keys starting "mem"; PUTs through Write and Commit.
type endpoint struct {
	srv     *Server
	mem     *Mem
	mu      sync.Mutex
	objects map[string][]byte
	wait    chan *Transfer // when set: the test waits for the transfer
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Path[1:]
	tok := r.Header.Get("x-amz-rdma-token")
	if tok == "" {
		http.Error(w, "a token is required here", http.StatusBadRequest)
		return
	}
	var req Request
	req.Token = tok
	switch r.Method {
	case http.MethodGet:
		e.mu.Lock()
		data, ok := e.objects[key]
		e.mu.Unlock()
		if !ok {
			http.Error(w, "NoSuchKey", http.StatusNotFound)
			return
		}
		req.Op, req.Length = OpGet, uint64(len(data))
		if key[:3] == "mem" {
			copy(e.mem.Bytes(), data)
			req.Mem = e.mem
		} else if key == "panics" {
			req.Read = func(uint64, []byte) error { panic("a store that panics") }
		} else {
			req.Read = func(off uint64, p []byte) error {
				copy(p, data[off:])
				return nil
			}
		}
	case http.MethodPut:
		n, err := ParseToken(tok)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got := make([]byte, n)
		req.Op, req.Length = OpPut, n
		req.Write = func(off uint64, p []byte) error {
			copy(got[off:], p)
			return nil
		}
		req.Commit = func(uint64) error {
			e.mu.Lock()
			e.objects[key] = got
			e.mu.Unlock()
			return nil
		}
	default:
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	x, ans, err := e.srv.Start(req)
	if ans.RdmaReply != "" {
		w.Header().Set("x-amz-rdma-reply", ans.RdmaReply)
	}
	if err != nil {
		if ans.HTTPStatus != 0 {
			w.WriteHeader(ans.HTTPStatus)
			return
		}
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	e.mu.Lock()
	wait := e.wait
	e.mu.Unlock()
	if wait != nil {
		wait <- x
	} else {
		x.Release()
	}
	w.Header().Set("x-amz-rdma-bytes-transferred",
		strconv.FormatUint(ans.BytesTransferred, 10))
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

func (e *endpoint) object(key string) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.objects[key]
}

// ops sends one request to the endpoint and keeps its reply.
type ops struct {
	method, url string
	reply       string
	status      int
}

func (o *ops) SendRequest(ctx context.Context, token string) error {
	req, err := http.NewRequestWithContext(ctx, o.method, o.url, http.NoBody)
	if err != nil {
		return err
	}
	req.Header["x-amz-rdma-token"] = []string{token}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	o.status, o.reply = resp.StatusCode, resp.Header.Get("x-amz-rdma-reply")
	return nil
}

func (o *ops) RecvReply(context.Context) (string, error) {
	if o.reply == "" {
		return "", fmt.Errorf("HTTP %d without x-amz-rdma-reply", o.status)
	}
	return o.reply, nil
}

// A Go endpoint embeds the server library: a PUT and GETs (through
// callbacks and from registered memory) by RDMA, bytes and counters
// checked, and a token of the wrong length declined (501).
func TestGoEndpointRDMA(t *testing.T) {
	srv, err := OpenFabric(&Config{ReadyTimeoutMs: 2000, RdmaTimeoutMs: 2000,
		ChunkSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if n := srv.NICs(); len(n) != 1 {
		t.Fatalf("NICs %v", n)
	}
	mem, err := srv.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	ep := &endpoint{srv: srv, mem: mem, objects: map[string][]byte{}}
	hs := httptest.NewServer(ep)
	defer hs.Close()

	data := make([]byte, 300<<10+5)
	rand.New(rand.NewSource(7)).Read(data)
	buf, err := hipobj.AllocHost(len(data))
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	copy(buf.Bytes(), data)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	put := &ops{method: http.MethodPut, url: hs.URL + "/obj"}
	if err := buf.Put(ctx, hipobj.Transfer{Size: len(data), Peer: hs.URL, Ops: put}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ep.object("obj"), data) {
		t.Fatal("PUT: the endpoint stored other bytes")
	}
	ep.mu.Lock()
	ep.objects["memobj"] = data[:100000]
	ep.mu.Unlock()
	for _, key := range []string{"obj", "memobj"} {
		want := ep.object(key)
		copy(buf.Bytes(), make([]byte, len(data)))
		get := &ops{method: http.MethodGet, url: hs.URL + "/" + key}
		if err := buf.Get(ctx, hipobj.Transfer{Size: len(want), Peer: hs.URL, Ops: get}); err != nil {
			t.Fatalf("GET %s: %v", key, err)
		}
		if !bytes.Equal(buf.Bytes()[:len(want)], want) {
			t.Fatalf("GET %s: the bytes differ", key)
		}
	}
	// A token the application drives: the buffer is held until Release.
	copy(buf.Bytes(), make([]byte, len(data)))
	tok, err := buf.BeginGet(len(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := buf.Close(); !errors.Is(err, hipobj.Busy) {
		t.Fatalf("Close with a live token: %v, want Busy", err)
	}
	drv := &ops{method: http.MethodGet, url: hs.URL + "/obj"}
	if err := drv.SendRequest(ctx, tok.String()); err != nil {
		t.Fatal(err)
	}
	if err := tok.Complete(drv.reply); err != nil {
		t.Fatal(err)
	}
	tok.Release()
	tok.Release()
	if !bytes.Equal(buf.Bytes(), data) {
		t.Fatal("driven GET: the bytes differ")
	}
	// A Read callback that panics fails its transfer, and Wait says so;
	// the server library's warning goes to the Go logger.
	logged := make(chan string, 16)
	if err := SetLogger(func(_ int, m string) {
		select {
		case logged <- m:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	defer SetLogger(nil)
	ep.mu.Lock()
	ep.objects["panics"] = data[:5000]
	ep.wait = make(chan *Transfer, 1)
	ep.mu.Unlock()
	bad := &ops{method: http.MethodGet, url: hs.URL + "/panics"}
	if err := buf.Get(ctx, hipobj.Transfer{Size: 5000, Ops: bad}); err == nil {
		t.Fatal("a transfer whose Read panicked succeeded")
	}
	x := <-ep.wait
	if _, err := x.Wait(ctx); !errors.Is(err, IoError) {
		t.Fatalf("Wait: %v, want IoError", err)
	}
	x.Release()
	x.Release()
	if err := SetLogger(nil); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-logged:
		t.Logf("server warning: %s", m)
	default:
		t.Log("the server library logged nothing for the failed read")
	}
	ep.mu.Lock()
	ep.wait = nil
	ep.mu.Unlock()
	// The token names more bytes than the object has: declined.
	get := &ops{method: http.MethodGet, url: hs.URL + "/memobj"}
	err = buf.Get(ctx, hipobj.Transfer{Size: len(data), Ops: get})
	if !errors.Is(err, hipobj.S3Error) || get.status != 501 || get.reply != "501" {
		t.Fatalf("wrong length: %v (HTTP %d, reply %q), want a 501 decline",
			err, get.status, get.reply)
	}
	// The server counts a transfer once its final message is sent: the
	// client may see it first.
	var st Stats
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if st, err = srv.Stats(); err != nil {
			t.Fatal(err)
		}
		if st.Completed+st.Failed == st.Started || time.Now().After(end) {
			break
		}
	}
	if st.Completed != 4 || st.Failed != 1 || st.BytesRead != uint64(len(data)) ||
		st.BytesWritten != uint64(2*len(data)+100000) || st.Declined != 1 {
		t.Fatalf("stats %+v", st)
	}
	if err := mem.Close(); err != nil {
		t.Fatal(err)
	}
}
