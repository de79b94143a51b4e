// SPDX-License-Identifier: MIT

package hipobj

// #include <hipobj.h>
import "C"

import "fmt"

// Code is one of the library's operation errors (hipObjOpError_t). Its
// values are the C ABI's. A Code is an error itself, so that
// errors.Is(err, hipobj.Busy) tests an *Error's code.
type Code int

// The library's operation errors.
const (
	Success              Code = C.hipObjSuccess
	InvalidValue         Code = C.hipObjInvalidValue
	NotInitialized       Code = C.hipObjNotInitialized
	AlreadyInitialized   Code = C.hipObjAlreadyInitialized
	RdmaError            Code = C.hipObjRdmaError
	S3Error              Code = C.hipObjS3Error
	BufNotRegistered     Code = C.hipObjBufNotRegistered
	BufAlreadyRegistered Code = C.hipObjBufAlreadyRegistered
	NicNotFound          Code = C.hipObjNicNotFound
	DmabufNotSupported   Code = C.hipObjDmabufNotSupported
	SizeTooLarge         Code = C.hipObjSizeTooLarge
	InternalError        Code = C.hipObjInternalError
	NotSupported         Code = C.hipObjNotSupported
	Busy                 Code = C.hipObjBusy
)

// Error returns the library's string for the code.
func (c Code) Error() string {
	return C.GoString(C.hipObjGetErrorString(C.hipObjOpError_t(c)))
}

// Error is a failed call: the function, the library's code, the GPU
// runtime's own error number behind it (or 0), and for a transfer the
// error an Ops callback returned (or nil).
type Error struct {
	Op       string // "hipObjGet", "hipObjBufRegister", ...
	Code     Code
	HipError int
	Err      error // the callback's error, if one failed
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Op, e.Code.Error())
	if e.HipError != 0 {
		s += fmt.Sprintf(" (GPU runtime error %d)", e.HipError)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is this error's Code.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

// Unwrap gives the callback's error, so errors.As reaches it.
func (e *Error) Unwrap() error { return e.Err }

// check turns a C result into nil or an *Error.
func check(op string, r C.hipObjError_t) error {
	if r.opError == C.hipObjSuccess {
		return nil
	}
	return &Error{Op: op, Code: Code(r.opError), HipError: int(r.hipError)}
}
