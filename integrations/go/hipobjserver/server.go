// SPDX-License-Identifier: MIT

// Package hipobjserver is the Go binding of libhipobj_server, the server
// side of hipObject's RDMA protocol (include/hipobj_server.h), for S3
// servers written in Go: after authenticating a request that carries
// x-amz-rdma-token, hand the token to Server.Start and answer the HTTP
// request with the Answer it returns; the payload then moves by RDMA on
// the library's threads, through registered memory (Alloc) or the
// Request's Read, Write and Commit functions.
//
// Memory follows cgo's pointer rules: the library keeps registered memory
// between calls, so it is C memory (Alloc); the slices the callbacks get
// are views of the library's buffers, valid only during the call.
package hipobjserver

// #include <stdlib.h>
// #include <string.h>
// #include "ho_go_server.h"
import "C"

import (
	"context"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Status is a hipObjServerStatus_t; a Status is an error, so
// errors.Is(err, hipobjserver.Declined) tests an *Error's.
type Status int

// The library's results (values fixed by the C ABI).
const (
	Success       Status = C.hipObjServerSuccess
	InvalidValue  Status = C.hipObjServerInvalidValue
	NoDevice      Status = C.hipObjServerNoDevice
	RdmaError     Status = C.hipObjServerRdmaError
	NoMemory      Status = C.hipObjServerNoMemory
	BadToken      Status = C.hipObjServerBadToken
	Declined      Status = C.hipObjServerDeclined
	Busy          Status = C.hipObjServerBusy
	Pending       Status = C.hipObjServerPending
	Cancelled     Status = C.hipObjServerCancelled
	TimedOut      Status = C.hipObjServerTimedOut
	IoError       Status = C.hipObjServerIoError
	ProtocolError Status = C.hipObjServerProtocolError
	NotSupported  Status = C.hipObjServerNotSupported
)

func (s Status) Error() string {
	return C.GoString(C.hipObjServerStatusString(C.hipObjServerStatus_t(s)))
}

// Error is a failed call and the library's status.
type Error struct {
	Op     string
	Status Status
}

func (e *Error) Error() string { return e.Op + ": " + e.Status.Error() }

// Is reports whether target is this error's Status.
func (e *Error) Is(target error) bool {
	s, ok := target.(Status)
	return ok && s == e.Status
}

func check(op string, s C.hipObjServerStatus_t) error {
	if s == C.hipObjServerSuccess {
		return nil
	}
	return &Error{Op: op, Status: Status(s)}
}

// Config is hipObjServerConfig_t; zero fields take the library's defaults.
type Config struct {
	NICs           []string // RDMA devices; none: the first active one
	AllActiveNICs  bool     // with no NICs: every NIC with an active port
	MaxTransfers   uint32
	MaxConnections uint32
	IdleTimeoutMs  uint32
	ReadyTimeoutMs uint32
	RdmaTimeoutMs  uint32
	Depth          uint32
	GraceMs        uint32
	ChunkSize      uint64
}

// fill writes c into a C config; NIC names are allocated with C.malloc
// and freed by freeNICs.
func (cfg *Config) fill(c *C.hipObjServerConfig_t) {
	C.memset(unsafe.Pointer(c), 0, C.sizeof_hipObjServerConfig_t)
	c.size = C.sizeof_hipObjServerConfig_t
	if cfg == nil {
		return
	}
	if cfg.AllActiveNICs {
		c.flags = C.HIPOBJ_SERVER_ALL_ACTIVE_NICS
	}
	c.maxTransfers = C.uint32_t(cfg.MaxTransfers)
	c.maxConnections = C.uint32_t(cfg.MaxConnections)
	c.idleTimeoutMs = C.uint32_t(cfg.IdleTimeoutMs)
	c.readyTimeoutMs = C.uint32_t(cfg.ReadyTimeoutMs)
	c.rdmaTimeoutMs = C.uint32_t(cfg.RdmaTimeoutMs)
	c.depth = C.uint32_t(cfg.Depth)
	c.graceMs = C.uint32_t(cfg.GraceMs)
	c.chunkSize = C.uint64_t(cfg.ChunkSize)
	if len(cfg.NICs) > 0 {
		n := len(cfg.NICs)
		arr := (**C.char)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		names := unsafe.Slice(arr, n)
		for i, s := range cfg.NICs {
			names[i] = C.CString(s)
		}
		c.nics = arr
		c.nicCount = C.uint32_t(n)
	}
}

func freeNICs(c *C.hipObjServerConfig_t) {
	if c.nics == nil {
		return
	}
	for _, p := range unsafe.Slice(c.nics, int(c.nicCount)) {
		C.free(unsafe.Pointer(p))
	}
	C.free(unsafe.Pointer(c.nics))
}

// Server is an open libhipobj_server instance.
type Server struct {
	s *C.hipObjServer_t
}

// Open opens the NICs the config names (hipObjServerOpen). NoDevice: no
// usable RDMA device (serve plain HTTP, answer tokens 501).
func Open(cfg *Config) (*Server, error) {
	var c C.hipObjServerConfig_t
	cfg.fill(&c)
	defer freeNICs(&c)
	var s *C.hipObjServer_t
	if err := check("hipObjServerOpen", C.hipObjServerOpen(&c, &s)); err != nil {
		return nil, err
	}
	return &Server{s: s}, nil
}

// Close waits for the running transfers to end and frees the server and
// the memory still registered (hipObjServerClose). Not from a callback.
func (s *Server) Close() {
	if s.s != nil {
		C.hipObjServerClose(s.s)
		s.s = nil
	}
}

// NICs are the devices open, in the order used.
func (s *Server) NICs() []string {
	var out []string
	for i := C.uint32_t(0); i < C.hipObjServerNicCount(s.s); i++ {
		out = append(out, C.GoString(C.hipObjServerNicName(s.s, i)))
	}
	return out
}

// Mem is registered memory the library allocated (hipObjServerAlloc).
type Mem struct {
	m *C.hipObjServerMem_t
	n int
}

// Alloc allocates n bytes, page-aligned and zeroed, registered on every
// NIC: a pool to carve with Request.MemOffset. Mem.Close frees it.
func (s *Server) Alloc(n int) (*Mem, error) {
	var m *C.hipObjServerMem_t
	if n <= 0 {
		return nil, &Error{Op: "hipObjServerAlloc", Status: InvalidValue}
	}
	if err := check("hipObjServerAlloc",
		C.hipObjServerAlloc(s.s, C.uint64_t(n), &m)); err != nil {
		return nil, err
	}
	return &Mem{m: m, n: n}, nil
}

// Bytes is the memory as a slice of C memory, valid until Close.
func (m *Mem) Bytes() []byte {
	if m.m == nil {
		return nil
	}
	return unsafe.Slice((*byte)(C.hipObjServerMemAddress(m.m)), m.n)
}

// Close deregisters and frees the memory; Busy while a transfer uses it.
func (m *Mem) Close() error {
	if m.m == nil {
		return &Error{Op: "hipObjServerDeregister", Status: InvalidValue}
	}
	if err := check("hipObjServerDeregister", C.hipObjServerDeregister(m.m)); err != nil {
		return err
	}
	m.m = nil
	return nil
}

// Op is the operation of a request.
type Op int

// Operations (hipObjServerOp_t).
const (
	OpPut Op = C.hipObjServerOpPut // PutObject, UploadPart: RDMA READ
	OpGet Op = C.hipObjServerOpGet // GetObject: RDMA WRITE
)

// Request is one S3 request's transfer (hipObjServerRequest_t): its
// payload is in Mem at MemOffset, or streamed through Read (GET) or Write
// (PUT), never both. The callbacks run on the library's transfer threads,
// one call at a time per transfer; the slices they get are the library's
// buffers, valid only during the call. A callback that returns an error
// fails the transfer (the client is told the store failed).
type Request struct {
	Op        Op
	Token     string // the x-amz-rdma-token value
	Length    uint64 // bytes to move (> 0)
	Mem       *Mem
	MemOffset uint64
	Read      func(offset uint64, p []byte) error
	Write     func(offset uint64, p []byte) error
	// Commit (PUT, optional): every byte has arrived; make it durable.
	Commit func(bytes uint64) error
	// Done (optional): once, when the transfer has ended.
	Done func(status Status, bytes uint64)
}

// Answer is what to answer the HTTP request with (hipObjServerReply_t).
type Answer struct {
	HTTPStatus       int    // 0 on success: the request's own (200/206)
	RdmaReply        string // x-amz-rdma-reply; "" for a 400: no header
	BytesTransferred uint64 // x-amz-rdma-bytes-transferred on success
}

// Transfer is a started transfer.
type Transfer struct {
	x    *C.hipObjServerTransfer_t
	once sync.Once
}

// callback runs one of the request's functions on a transfer thread: an
// error or a panic fails the transfer (a panic must not unwind into C).
func callback(f func() error) (rc C.int) {
	defer func() {
		if recover() != nil {
			rc = 1
		}
	}()
	if f() != nil {
		return 1
	}
	return 0
}

//export hoGoSrvRead
func hoGoSrvRead(h C.uintptr_t, off C.uint64_t, buf unsafe.Pointer, n C.size_t) C.int {
	r := cgo.Handle(h).Value().(*Request)
	return callback(func() error {
		return r.Read(uint64(off), unsafe.Slice((*byte)(buf), int(n)))
	})
}

//export hoGoSrvWrite
func hoGoSrvWrite(h C.uintptr_t, off C.uint64_t, buf unsafe.Pointer, n C.size_t) C.int {
	r := cgo.Handle(h).Value().(*Request)
	return callback(func() error {
		return r.Write(uint64(off), unsafe.Slice((*byte)(buf), int(n)))
	})
}

//export hoGoSrvCommit
func hoGoSrvCommit(h C.uintptr_t, n C.uint64_t) C.int {
	r := cgo.Handle(h).Value().(*Request)
	return callback(func() error { return r.Commit(uint64(n)) })
}

//export hoGoSrvDone
func hoGoSrvDone(h C.uintptr_t, status C.int, n C.uint64_t) {
	hd := cgo.Handle(h)
	r := hd.Value().(*Request)
	hd.Delete()
	if r.Done != nil {
		callback(func() error { r.Done(Status(status), uint64(n)); return nil })
	}
}

// Start takes an authenticated request's token and, if it can be served,
// starts its transfer (hipObjServerStart). On success answer the request
// now with the Answer (its own status, no body). On BadToken, Declined or
// Busy the error is an *Error with that Status and the Answer says what to
// answer (400, 501 or 503); nothing started.
func (s *Server) Start(req Request) (*Transfer, Answer, error) {
	var c C.hipObjServerRequest_t
	C.memset(unsafe.Pointer(&c), 0, C.sizeof_hipObjServerRequest_t)
	c.size = C.sizeof_hipObjServerRequest_t
	c.op = C.uint32_t(req.Op)
	tok := C.CString(req.Token)
	defer C.free(unsafe.Pointer(tok))
	c.token = tok
	c.tokenLength = C.uint64_t(len(req.Token))
	c.length = C.uint64_t(req.Length)
	stream := 0
	if req.Mem != nil {
		c.mem = req.Mem.m
		c.memOffset = C.uint64_t(req.MemOffset)
	} else if (req.Op == OpGet && req.Read != nil) || (req.Op == OpPut && req.Write != nil) {
		stream = 1
	}
	commit := 0
	if req.Op == OpPut && req.Commit != nil {
		commit = 1
	}
	h := cgo.NewHandle(&req)
	var reply C.hipObjServerReply_t
	var x *C.hipObjServerTransfer_t
	st := C.ho_go_srv_start(s.s, &c, C.int(stream), C.int(commit),
		C.uintptr_t(h), &reply, &x)
	ans := Answer{HTTPStatus: int(reply.httpStatus),
		RdmaReply:        C.GoString(&reply.rdmaReply[0]),
		BytesTransferred: uint64(reply.bytesTransferred)}
	if err := check("hipObjServerStart", st); err != nil {
		h.Delete() // no done callback comes
		switch Status(st) {
		case BadToken, Declined, Busy:
			return nil, ans, err
		}
		return nil, Answer{}, err
	}
	return &Transfer{x: x}, ans, nil
}

// Wait waits for the transfer's end or ctx's (checked every 50 ms), and
// returns its status as an error (nil for Success) and the bytes moved;
// Pending with ctx done.
func (t *Transfer) Wait(ctx context.Context) (uint64, error) {
	for {
		var n C.uint64_t
		st := Status(C.hipObjServerTransferWait(t.x, 50, &n))
		if st != Pending {
			if st == Success {
				return uint64(n), nil
			}
			return uint64(n), &Error{Op: "hipObjServerTransferWait", Status: st}
		}
		if ctx.Err() != nil {
			return 0, &Error{Op: "hipObjServerTransferWait", Status: Pending}
		}
	}
}

// Cancel asks the transfer to stop (the client is told it failed).
func (t *Transfer) Cancel() { C.hipObjServerTransferCancel(t.x) }

// Release lets the handle go; a running transfer goes on. Once.
func (t *Transfer) Release() {
	t.once.Do(func() { C.hipObjServerTransferRelease(t.x) })
}

// ParseToken is the byte count a client's token names, for a PUT or
// UploadPart whose request has no body (hipObjServerParseToken).
// BadToken: answer 400; Declined: answer 501.
func ParseToken(token string) (uint64, error) {
	tok := C.CString(token)
	defer C.free(unsafe.Pointer(tok))
	var n C.uint64_t
	if err := check("hipObjServerParseToken",
		C.hipObjServerParseToken(tok, C.uint64_t(len(token)), &n)); err != nil {
		return 0, err
	}
	return uint64(n), nil
}

// Stats are the counters of every NIC, summed (a subset of
// hipObjServerStats_t).
type Stats struct {
	NICs         uint32
	Started      uint64
	Completed    uint64
	Failed       uint64
	BytesWritten uint64 // by RDMA WRITE (GETs)
	BytesRead    uint64 // by RDMA READ (PUTs)
	BadTokens    uint64
	Declined     uint64
	Busy         uint64
	ConnMade     uint64
	ConnReused   uint64
}

// Stats reads the counters (hipObjServerGetStats).
func (s *Server) Stats() (Stats, error) {
	var st C.hipObjServerStats_t
	C.memset(unsafe.Pointer(&st), 0, C.sizeof_hipObjServerStats_t)
	st.size = C.sizeof_hipObjServerStats_t
	if err := check("hipObjServerGetStats", C.hipObjServerGetStats(s.s, &st)); err != nil {
		return Stats{}, err
	}
	return Stats{NICs: uint32(st.nics), Started: uint64(st.started),
		Completed: uint64(st.completed), Failed: uint64(st.failed),
		BytesWritten: uint64(st.bytesWritten), BytesRead: uint64(st.bytesRead),
		BadTokens: uint64(st.badTokens), Declined: uint64(st.declined),
		Busy: uint64(st.busy), ConnMade: uint64(st.connMade),
		ConnReused: uint64(st.connReused)}, nil
}
