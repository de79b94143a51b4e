// SPDX-License-Identifier: MIT

// Package hipobj is the Go binding of libhipobj, hipObject's client
// library: it moves an S3 object's payload between the server and a
// registered host or GPU buffer by one-sided RDMA, while the application
// keeps its own S3 conversation (docs/protocol.md).
//
// The binding follows the C API (include/hipobj.h) closely and adds what Go
// needs:
//
//   - Errors are values: every failure is an *Error carrying the library's
//     Code (errors.Is(err, hipobj.Busy) works) and, for a transfer, the
//     error the application's callback returned (errors.As reaches it).
//   - Memory obeys cgo's pointer rules. The library keeps a registered
//     buffer's address between calls, so a registered buffer is never Go
//     memory: AllocHost allocates it with C's allocator (page-aligned,
//     zeroed) and Buffer.Bytes is a view of it, valid until Close.
//     RegisterDevice takes a GPU runtime's device pointer, which is not Go
//     memory either. No C pointer is exposed.
//   - A transfer takes a context.Context. It is checked before the transfer
//     starts and handed to the Ops callbacks, so the S3 request runs under
//     its deadline; once the server has answered, the RDMA phase is bounded
//     by the library's own timeouts (HIPOBJ_TRANSFER_TIMEOUT_MS), not by
//     the context: a buffer the NIC may still write is never given back
//     early.
//   - hipObjSetPeerHint is per thread in C; Transfer.Peer sets it on the
//     OS thread the transfer runs on (the goroutine is locked to it for
//     the call).
//
// Link: the package links -lhipobj; set CGO_CFLAGS and CGO_LDFLAGS to the
// installed include and library directories (docs/go.md).
package hipobj
