// SPDX-License-Identifier: MIT

package hipobj

// #include <stdlib.h>
// #include <hipobj.h>
import "C"

import (
	"sync"
	"unsafe"
)

// Token is a transfer the application drives itself
// (hipObjGetRdmaToken): send String() as x-amz-rdma-token, hand the
// server's x-amz-rdma-reply to Complete, then Release. The buffer stays
// read-locked (Close fails Busy) until Release.
type Token struct {
	mu  sync.Mutex
	tok *C.char
	buf *Buffer
	s   string
}

// BeginGet starts a transfer of the first size bytes of the buffer, which
// the server will RDMA WRITE. It never waits for a connection: Busy when
// every connection is leased.
func (b *Buffer) BeginGet(size int) (*Token, error) {
	return b.begin(size, C.HIPOBJ_RDMA_OP_GET)
}

// BeginPut starts a transfer the server will RDMA READ. For a staged
// device buffer, Sync(0, size, ToHost) first.
func (b *Buffer) BeginPut(size int) (*Token, error) {
	return b.begin(size, C.HIPOBJ_RDMA_OP_PUT)
}

func (b *Buffer) begin(size int, op C.int) (*Token, error) {
	if err := b.use(0, size, "hipObjGetRdmaToken"); err != nil {
		return nil, err
	}
	var tok *C.char
	if err := check("hipObjGetRdmaToken",
		C.hipObjGetRdmaToken(b.ptr, C.size_t(size), op, &tok)); err != nil {
		b.mu.RUnlock()
		return nil, err
	}
	return &Token{tok: tok, buf: b, s: C.GoString(tok)}, nil
}

// String is the token's 88 hex digits.
func (t *Token) String() string { return t.s }

// Complete finishes the transfer given the server's x-amz-rdma-reply
// (hipObjCompleteRdmaTransfer). A token completes once.
func (t *Token) Complete(reply string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok == nil {
		return &Error{Op: "hipObjCompleteRdmaTransfer", Code: InvalidValue}
	}
	r := C.CString(reply)
	defer C.free(unsafe.Pointer(r))
	return check("hipObjCompleteRdmaTransfer",
		C.hipObjCompleteRdmaTransfer(t.tok, r, C.size_t(len(reply))))
}

// Release gives the token back; a transfer not completed is abandoned.
// Releasing twice does nothing.
func (t *Token) Release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok == nil {
		return
	}
	C.hipObjPutRdmaToken(t.tok)
	t.tok = nil
	t.buf.mu.RUnlock()
}
