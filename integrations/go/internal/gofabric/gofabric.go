// SPDX-License-Identifier: MIT

//go:build hipobj_fabric

// Package gofabric drives libhipobj_gofabric (test only): the client
// instance and the server library on the simulated fabric, and the
// in-process S3 responder whose RDMA side is the reference engine.
package gofabric

// #cgo CFLAGS: -I${SRCDIR}/../../fabric
// #cgo LDFLAGS: -lhipobj_gofabric
// #include "gofabric.h"
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
