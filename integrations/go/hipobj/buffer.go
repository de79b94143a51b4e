// SPDX-License-Identifier: MIT

package hipobj

// #include <stdint.h>
// #include <stdlib.h>
// #include <string.h>
// #include <hipobj.h>
//
// static void *ho_go_alloc(size_t size)
// {
//   size_t page = 4096, n = (size + page - 1) / page * page;
//   void *p = aligned_alloc(page, n);
//   if (p)
//     memset(p, 0, n);
//   return p;
// }
// static void *ho_go_ptr(uintptr_t p) { return (void *)p; }
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Buffer is a registered buffer: host memory the binding allocated
// (AllocHost), or a GPU runtime's device memory (RegisterDevice). Its
// address stays fixed, so the library, the NIC and the server may use it
// between calls; Go's collector never sees it.
type Buffer struct {
	mu     sync.RWMutex // transfers read-lock it; Close write-locks it
	ptr    unsafe.Pointer
	size   int
	device bool
	owned  bool // allocated here: freed by Close
	plain  bool // AllocPlain: not registered
	closed bool
}

// AllocHost allocates size bytes of zeroed, page-aligned host memory
// outside Go's heap and registers it (hipObjBufRegisterHost). Close
// deregisters and frees it.
func AllocHost(size int) (*Buffer, error) {
	if size <= 0 {
		return nil, &Error{Op: "hipObjBufRegisterHost", Code: InvalidValue}
	}
	p := C.ho_go_alloc(C.size_t(size))
	if p == nil {
		return nil, &Error{Op: "aligned_alloc", Code: InternalError}
	}
	if err := check("hipObjBufRegisterHost",
		C.hipObjBufRegisterHost(p, C.size_t(size))); err != nil {
		C.free(p)
		return nil, err
	}
	return &Buffer{ptr: p, size: size, owned: true}, nil
}

// AllocPlain allocates host memory as AllocHost does but does not
// register it: a buffer for plain HTTP transfers where there is no
// hipObject instance (no RDMA device), so that code can use one buffer
// type either way. Get and Put on it fail BufNotRegistered.
func AllocPlain(size int) (*Buffer, error) {
	if size <= 0 {
		return nil, &Error{Op: "AllocPlain", Code: InvalidValue}
	}
	p := C.ho_go_alloc(C.size_t(size))
	if p == nil {
		return nil, &Error{Op: "aligned_alloc", Code: InternalError}
	}
	return &Buffer{ptr: p, size: size, owned: true, plain: true}, nil
}

// Registered says whether the library knows the buffer (not AllocPlain).
func (b *Buffer) Registered() bool { return !b.plain }

// RegisterDevice registers size bytes of GPU memory at the device pointer
// ptr (from hipMalloc, cuMemAlloc, ...; hipObjBufRegister): GPU-direct
// where it can, else through a pinned host staging buffer. The memory
// stays the caller's and must outlive Close. Bytes is nil for it: the CPU
// never touches device memory.
func RegisterDevice(ptr uintptr, size int) (*Buffer, error) {
	if ptr == 0 || size <= 0 {
		return nil, &Error{Op: "hipObjBufRegister", Code: InvalidValue}
	}
	p := C.ho_go_ptr(C.uintptr_t(ptr))
	if err := check("hipObjBufRegister",
		C.hipObjBufRegister(p, C.size_t(size))); err != nil {
		return nil, err
	}
	return &Buffer{ptr: p, size: size, device: true}, nil
}

// Len is the buffer's size in bytes.
func (b *Buffer) Len() int { return b.size }

// Device says whether the buffer is GPU memory.
func (b *Buffer) Device() bool { return b.device }

// Bytes is the host buffer as a slice of C memory, valid until Close
// (nil for device memory). Do not keep it past Close.
func (b *Buffer) Bytes() []byte {
	if b.device || b.closed {
		return nil
	}
	return unsafe.Slice((*byte)(b.ptr), b.size)
}

// Close deregisters the buffer and frees the memory AllocHost allocated.
// A transfer in progress makes it fail with Busy (nothing is released);
// closing twice is InvalidValue.
func (b *Buffer) Close() error {
	if !b.mu.TryLock() {
		return &Error{Op: "hipObjBufDeregister", Code: Busy}
	}
	defer b.mu.Unlock()
	if b.closed {
		return &Error{Op: "hipObjBufDeregister", Code: InvalidValue}
	}
	if err := b.deregister(); err != nil {
		return err
	}
	if b.owned {
		C.free(b.ptr)
	}
	b.closed = true
	b.ptr = nil
	return nil
}

func (b *Buffer) deregister() error {
	if b.plain {
		return nil
	}
	err := check("hipObjBufDeregister", C.hipObjBufDeregister(b.ptr))
	if e, ok := err.(*Error); ok && e.Code == NotInitialized {
		return nil // after Shutdown: the instance deregistered it
	}
	return err
}

// SyncDirection is the way Sync copies a staged device buffer.
type SyncDirection int

// Sync directions.
const (
	ToHost   SyncDirection = C.HIPOBJ_SYNC_TO_HOST   // device -> staging, before a PUT
	ToDevice SyncDirection = C.HIPOBJ_SYNC_TO_DEVICE // staging -> device, after a GET
)

// Sync copies [offset, offset+size) of a staged device buffer between the
// device and its staging memory (hipObjBufSync); it does nothing for a
// buffer that is not staged. Get and Put need it only with tokens the
// application drives (BeginGet, BeginPut).
func (b *Buffer) Sync(offset, size int, dir SyncDirection) error {
	if err := b.use(offset, size, "hipObjBufSync"); err != nil {
		return err
	}
	defer b.mu.RUnlock()
	return check("hipObjBufSync", C.hipObjBufSync(b.ptr, C.size_t(size),
		C.off_t(offset), C.int(dir)))
}

// use read-locks an open buffer and checks [offset, offset+size) is in it.
func (b *Buffer) use(offset, size int, op string) error {
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return &Error{Op: op, Code: BufNotRegistered}
	}
	if offset < 0 || size <= 0 || offset > b.size || size > b.size-offset {
		b.mu.RUnlock()
		return &Error{Op: op, Code: InvalidValue,
			Err: fmt.Errorf("range [%d, +%d) outside a buffer of %d bytes",
				offset, size, b.size)}
	}
	return nil
}
