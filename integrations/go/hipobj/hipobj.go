// SPDX-License-Identifier: MIT

package hipobj

// #include <stdlib.h>
// #include <string.h>
// #include <hipobj.h>
import "C"

import (
	"net"
	"unsafe"
)

// Config chooses the GPU and the NIC (hipObjConfig_t).
type Config struct {
	// GPUDevice is the GPU ordinal; -1 for the current device. The zero
	// Config means GPU 0: set -1 on a host without a GPU.
	GPUDevice int
	// NICHint: comma-separated RDMA device names, or "".
	NICHint string
	// FirstActiveNIC: with no hint and no NIC chosen by its distance from
	// the GPU, use the first RDMA device with an active port
	// (HIPOBJ_INIT_FIRST_ACTIVE_NIC) rather than failing NicNotFound.
	FirstActiveNIC bool
}

// Init opens the library's instance (hipObjInit). Errors: InvalidValue,
// AlreadyInitialized, NicNotFound (no usable RDMA device: fall back to
// plain HTTP), RdmaError, InternalError.
func Init(cfg Config) error {
	var c C.hipObjConfig_t
	c.gpuDevice = C.int(cfg.GPUDevice)
	if cfg.FirstActiveNIC {
		c.flags = C.HIPOBJ_INIT_FIRST_ACTIVE_NIC
	}
	if cfg.NICHint != "" {
		h := C.CString(cfg.NICHint)
		defer C.free(unsafe.Pointer(h))
		c.nicHint = h
	}
	return check("hipObjInit", C.hipObjInit(&c))
}

// Shutdown closes the instance (hipObjShutdown); transfers in progress
// finish on it first. Errors: NotInitialized.
func Shutdown() error { return check("hipObjShutdown", C.hipObjShutdown()) }

// Version is the library's "major.minor.patch".
func Version() string { return C.GoString(C.hipObjGetVersionString()) }

// ParseReply parses an x-amz-rdma-reply value strictly and returns its
// HTTP-style status: 200 for a server token, 501 for a decline.
func ParseReply(reply string) (int, error) {
	cs := C.CString(reply)
	defer C.free(unsafe.Pointer(cs))
	var code C.int
	if err := check("hipObjParseRdmaReply",
		C.hipObjParseRdmaReply(cs, C.size_t(len(reply)), &code)); err != nil {
		return 0, err
	}
	return int(code), nil
}

// TokenClientNIC is the IPv4 address of the NIC a token names, or nil when
// its GID is not IPv4-mapped.
func TokenClientNIC(token string) (net.IP, error) {
	cs := C.CString(token)
	defer C.free(unsafe.Pointer(cs))
	var ip [16]C.char
	if err := check("hipObjTokenClientNic",
		C.hipObjTokenClientNic(cs, &ip[0], C.size_t(len(ip)))); err != nil {
		return nil, err
	}
	s := C.GoString(&ip[0])
	if s == "" {
		return nil, nil
	}
	return net.ParseIP(s), nil
}

// Info is what hipObjGetInfo reports: the instance's choices and counters.
type Info struct {
	Initialized        bool
	Version            string
	GPURuntime         int // hipObjGpuRuntime_t: 0 none, 1 HIP, 2 CUDA
	GPUDevice          int
	GPUBusID           string
	NIC                string
	NICBusID           string
	NICChoice          int // hipObjNicChoice_t
	Port               uint32
	GIDIndex           int
	RegModes           uint32 // HIPOBJ_REG_* bits
	MaxTransfers       uint32
	TokenScope         int // hipObjTokenScope_t: 1 window, 2 buffer
	Transfers          uint64
	TransfersSucceeded uint64
	BytesGet           uint64
	BytesPut           uint64
	Failures           map[Code]uint64
	ConnectionsMade    uint64
	ConnectionsReused  uint64
	QPTransitions      uint64
	WindowsBound       uint64
}

// GetInfo reads the library's choices and counters (hipObjGetInfo). It
// succeeds without an instance, with Initialized false.
func GetInfo() (Info, error) {
	var in C.hipObjInfo_t
	C.memset(unsafe.Pointer(&in), 0, C.sizeof_hipObjInfo_t)
	in.size = C.sizeof_hipObjInfo_t
	if err := check("hipObjGetInfo", C.hipObjGetInfo(&in)); err != nil {
		return Info{}, err
	}
	out := Info{
		Initialized: in.initialized != 0,
		Version:     Version(),
		GPURuntime:  int(in.gpuRuntime), GPUDevice: int(in.gpuDevice),
		GPUBusID: C.GoString(&in.gpuBusId[0]),
		NIC:      C.GoString(&in.nicName[0]), NICBusID: C.GoString(&in.nicBusId[0]),
		NICChoice: int(in.nicChoice), Port: uint32(in.port),
		GIDIndex: int(in.gidIndex), RegModes: uint32(in.regModes),
		MaxTransfers:       uint32(in.maxTransfers),
		Transfers:          uint64(in.transfers),
		TransfersSucceeded: uint64(in.transfersSucceeded),
		BytesGet:           uint64(in.bytesGet), BytesPut: uint64(in.bytesPut),
		Failures: map[Code]uint64{},
	}
	for i, n := range in.failures {
		if n != 0 {
			out.Failures[Code(i)] = uint64(n)
		}
	}
	// Fields past the first 488 bytes are read only if the library wrote
	// them (an older library writes less).
	if uintptr(in.size) >= unsafe.Offsetof(in.windowsBound)+8 {
		out.ConnectionsMade = uint64(in.connectionsMade)
		out.ConnectionsReused = uint64(in.connectionsReused)
		out.QPTransitions = uint64(in.qpTransitions)
		out.TokenScope = int(in.tokenScope)
		out.WindowsBound = uint64(in.windowsBound)
	}
	return out, nil
}

// MaxBufferSize is the largest buffer the library registers (4 GiB).
const MaxBufferSize = uint64(C.HIPOBJ_MAX_BUFFER_SIZE)
