// SPDX-License-Identifier: MIT

//go:build !hipobj_fabric

package hipobjserver

// #cgo LDFLAGS: -lhipobj_server
import "C"
