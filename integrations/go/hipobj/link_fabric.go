// SPDX-License-Identifier: MIT

//go:build hipobj_fabric

package hipobj

// Test only: with the hipobj_fabric build tag the package links
// libhipobj_gofabric (integrations/go/fabric), the library's modules on the
// simulated fabric of tests/fakes, so transfers run end to end without an
// RDMA device. Never ship a binary built with this tag.

// #cgo LDFLAGS: -lhipobj_gofabric
import "C"
