// SPDX-License-Identifier: MIT

//go:build !hipobj_fabric

package hipobj

// The production build links libhipobj. Point cgo at it with
// CGO_CFLAGS=-I<prefix>/include and CGO_LDFLAGS=-L<prefix>/lib, or let
// pkg-config find it (integrations/go/run.sh does the former for a build
// directory).

// #cgo LDFLAGS: -lhipobj
import "C"
