// SPDX-License-Identifier: MIT

package hipobjserver

// #include "ho_go_server.h"
import "C"

import "sync"

var (
	logMu sync.RWMutex
	logFn func(level int, message string)
)

//export hoGoSrvLog
func hoGoSrvLog(level C.int, msg *C.char) {
	logMu.RLock()
	fn := logFn
	logMu.RUnlock()
	if fn != nil {
		fn(int(level), C.GoString(msg))
	}
}

// SetLogger sends the server library's warnings to fn instead of stderr
// (hipObjServerSetLogCallback), for every server of the process; nil
// restores stderr. fn runs on the thread that logs (often a transfer
// thread), possibly on several at once; level is 1 for a warning. It
// returns once the previous logger's calls have returned. Errors: Busy
// (called from a logger), NoMemory.
func SetLogger(fn func(level int, message string)) error {
	on := C.int(0)
	if fn != nil {
		on = 1
	}
	logMu.Lock()
	old := logFn
	logFn = fn
	logMu.Unlock()
	if err := check("hipObjServerSetLogCallback", C.ho_go_srv_set_log(on)); err != nil {
		logMu.Lock()
		logFn = old
		logMu.Unlock()
		return err
	}
	return nil
}
