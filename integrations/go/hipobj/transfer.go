// SPDX-License-Identifier: MIT

package hipobj

// #include <stdlib.h>
// #include "ho_go.h"
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// Ops is the application's side of the S3 conversation (hipObjOps_t). Both
// run on the goroutine that called Get or Put, with ctx the transfer's.
type Ops interface {
	// SendRequest sends the S3 request with token (88 hex digits) in the
	// x-amz-rdma-token header, signed with the request, and returns once
	// the response's headers have arrived (an RDMA answer has no body).
	// One transfer may call it again, with a new token, after an attempt
	// failed for a fabric reason (HIPOBJ_RETRIES, docs/protocol.md
	// section 7): each call is a new request.
	SendRequest(ctx context.Context, token string) error
	// RecvReply returns that response's x-amz-rdma-reply value. A response
	// without one is an error: return one.
	RecvReply(ctx context.Context) (string, error)
}

// Transfer says what to move.
type Transfer struct {
	Offset int // where the payload starts in the buffer
	Size   int // bytes to move, > 0
	// Peer names the server ("http://host:port"), so the transfer rides a
	// connection kept for it (hipObjSetPeerHint); "" for none.
	Peer string
	Ops  Ops
}

// call is one transfer's state, reached from C by its cgo.Handle.
type call struct {
	ctx context.Context
	ops Ops
	err error // the first callback error
}

func (c *call) fail(err error) C.int {
	if c.err == nil {
		c.err = err
	}
	return 1
}

//export hoGoSend
func hoGoSend(h C.uintptr_t, token *C.char, n C.size_t) (rc C.int) {
	c := cgo.Handle(h).Value().(*call)
	defer func() {
		if p := recover(); p != nil {
			rc = c.fail(fmt.Errorf("SendRequest panicked: %v", p))
		}
	}()
	if err := c.ctx.Err(); err != nil {
		return c.fail(err)
	}
	if err := c.ops.SendRequest(c.ctx, C.GoStringN(token, C.int(n))); err != nil {
		return c.fail(err)
	}
	return 0
}

//export hoGoRecv
func hoGoRecv(h C.uintptr_t, reply *C.char, n *C.size_t) (rc C.int) {
	c := cgo.Handle(h).Value().(*call)
	defer func() {
		if p := recover(); p != nil {
			rc = c.fail(fmt.Errorf("RecvReply panicked: %v", p))
		}
	}()
	r, err := c.ops.RecvReply(c.ctx)
	if err != nil {
		return c.fail(err)
	}
	if len(r) > int(*n) {
		return c.fail(fmt.Errorf("x-amz-rdma-reply of %d bytes: at most %d",
			len(r), int(*n)))
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(reply)), int(*n)), r)
	*n = C.size_t(len(r))
	return 0
}

// Get moves t.Size bytes of the object into the buffer at t.Offset: the
// server RDMA WRITEs them (hipObjGet). It returns nil only when the server
// reported every byte written. A declined transfer (x-amz-rdma-reply: 501)
// is an *Error with Code S3Error: fall back to plain HTTP.
func (b *Buffer) Get(ctx context.Context, t Transfer) error {
	return b.transfer(ctx, t, "hipObjGet")
}

// Put moves t.Size bytes at t.Offset of the buffer to the server, which
// RDMA READs them (hipObjPut).
func (b *Buffer) Put(ctx context.Context, t Transfer) error {
	return b.transfer(ctx, t, "hipObjPut")
}

func (b *Buffer) transfer(ctx context.Context, t Transfer, op string) error {
	if t.Ops == nil {
		return &Error{Op: op, Code: InvalidValue, Err: fmt.Errorf("no Ops")}
	}
	if err := ctx.Err(); err != nil {
		return &Error{Op: op, Code: InvalidValue, Err: err}
	}
	if err := b.use(t.Offset, t.Size, op); err != nil {
		return err
	}
	defer b.mu.RUnlock()
	c := &call{ctx: ctx, ops: t.Ops}
	h := cgo.NewHandle(c)
	defer h.Delete()
	// The peer hint is the OS thread's: keep the goroutine on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if t.Peer != "" {
		p := C.CString(t.Peer)
		C.hipObjSetPeerHint(p)
		C.free(unsafe.Pointer(p))
		defer C.hipObjSetPeerHint(nil)
	}
	var r C.hipObjError_t
	if op == "hipObjGet" {
		r = C.ho_go_get(b.ptr, C.size_t(t.Size), C.off_t(t.Offset), C.uintptr_t(h))
	} else {
		r = C.ho_go_put(b.ptr, C.size_t(t.Size), C.off_t(t.Offset), C.uintptr_t(h))
	}
	if err := check(op, r); err != nil {
		err.(*Error).Err = c.err
		return err
	}
	return nil
}
