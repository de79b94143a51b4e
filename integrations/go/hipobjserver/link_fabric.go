// SPDX-License-Identifier: MIT

//go:build hipobj_fabric

package hipobjserver

// Test only: libhipobj_gofabric (integrations/go/fabric), the server
// library on the simulated fabric. Never ship a binary built with this tag.

// #cgo LDFLAGS: -lhipobj_gofabric
// #include <hipobj_server.h>
// hipObjServerStatus_t hipObjGoFabricServerOpen(const hipObjServerConfig_t *cfg,
//                                               hipObjServer_t **out);
import "C"

// OpenFabric opens a server on the simulated fabric's server NIC (test
// only; the client side is the fabric's client NIC).
func OpenFabric(cfg *Config) (*Server, error) {
	var c C.hipObjServerConfig_t
	cfg.fill(&c)
	defer freeNICs(&c)
	var s *C.hipObjServer_t
	if err := check("hipObjServerOpen", C.hipObjGoFabricServerOpen(&c, &s)); err != nil {
		return nil, err
	}
	return &Server{s: s}, nil
}
