// SPDX-License-Identifier: MIT

//go:build !hipobj_fabric

// Package gofabric is empty without the hipobj_fabric build tag: tests
// that need the simulated fabric skip.
package gofabric

import "errors"

// Available: this build does not link the fabric library.
const Available = false

// Modes of the S3 responder.
const (
	Normal     = 0
	Decline    = 1
	Ignore     = 2
	BadCount   = 3
	PlainReply = 4
)

// Counts says what moved how.
type Counts struct {
	RdmaGet, RdmaPut, HTTPGet, HTTPPut, Declined uint64
	ListParts, Completes, Aborts                 uint64
	RdmaBytes, HTTPBytes, OpenUploads            uint64
}

// Start fails: no fabric in this build.
func Start() (string, error) {
	return "", errors.New("built without the hipobj_fabric tag")
}

// SetMode does nothing.
func SetMode(int) {}

// Read returns zeros.
func Read() Counts { return Counts{} }

// Malloc returns 0: no fabric in this build.
func Malloc(int) uintptr { return 0 }

// Free does nothing.
func Free(uintptr) {}

// View returns nil.
func View(uintptr, int) []byte { return nil }
