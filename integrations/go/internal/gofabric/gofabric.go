// SPDX-License-Identifier: MIT

//go:build hipobj_fabric

// Package gofabric drives libhipobj_gofabric (test only): the client
// instance and the server library on the simulated fabric, and the
// in-process S3 responder whose RDMA side is the reference engine.
package gofabric

// #cgo CFLAGS: -I${SRCDIR}/../../fabric
// #cgo LDFLAGS: -lhipobj_gofabric
// #include <stdint.h>
// #include <stdlib.h>
// #include "gofabric.h"
// static uintptr_t gofabric_malloc(size_t n) { return (uintptr_t)calloc(1, n); }
// static void gofabric_free(uintptr_t p) { free((void *)p); }
// static void *gofabric_ptr(uintptr_t p) { return (void *)p; }
import "C"

import (
	"errors"
	"unsafe"
)

// Available: this build links the fabric library.
const Available = true

// Modes of the S3 responder (enum fabric_mode).
const (
	Normal     = 0
	Decline    = 1 // token requests: 501, x-amz-rdma-reply: 501
	Ignore     = 2 // the token ignored: a plain answer, no reply
	BadCount   = 3 // x-amz-rdma-bytes-transferred one too many
	PlainReply = 4 // x-amz-rdma-reply: 200 without a peer token
)

// Counts says what moved how.
type Counts struct {
	RdmaGet, RdmaPut, HTTPGet, HTTPPut, Declined uint64
	ListParts, Completes, Aborts                 uint64
	RdmaBytes, HTTPBytes, OpenUploads            uint64
}

// Start brings the fabric and the client instance up and starts the S3
// responder; it returns its endpoint. Idempotent.
func Start() (string, error) {
	var ep [64]C.char
	if C.hipObjGoFabricStart(&ep[0], C.size_t(len(ep))) != 0 {
		return "", errors.New("the simulated fabric did not start")
	}
	return C.GoString(&ep[0]), nil
}

// SetMode makes the responder misbehave (or not).
func SetMode(m int) { C.hipObjGoFabricSetMode(C.int(m)) }

// Read returns the counters.
func Read() Counts {
	var k [11]C.uint64_t
	C.hipObjGoFabricCounts((*C.uint64_t)(unsafe.Pointer(&k[0])))
	return Counts{uint64(k[0]), uint64(k[1]), uint64(k[2]), uint64(k[3]),
		uint64(k[4]), uint64(k[5]), uint64(k[6]), uint64(k[7]),
		uint64(k[8]), uint64(k[9]), uint64(k[10])}
}

// Malloc is C memory standing in for a GPU allocation in tests: its
// address, for hipobj.RegisterDevice (which registers host memory as it
// is), and Free. View reads or writes it.
func Malloc(n int) uintptr { return uintptr(C.gofabric_malloc(C.size_t(n))) }

// Free frees what Malloc allocated.
func Free(p uintptr) { C.gofabric_free(C.uintptr_t(p)) }

// View is Malloc's memory as a slice.
func View(p uintptr, n int) []byte {
	return unsafe.Slice((*byte)(C.gofabric_ptr(C.uintptr_t(p))), n)
}
