// SPDX-License-Identifier: MIT

package hipobj

// #include "ho_go.h"
import "C"

import "sync"

// LogLevel is a hipObjLogLevel_t.
type LogLevel int

// Log levels.
const (
	LogWarning LogLevel = C.hipObjLogWarning
	LogDebug   LogLevel = C.hipObjLogDebug // only with HIPOBJ_RDMA_DEBUG
)

var (
	logMu sync.RWMutex
	logFn func(LogLevel, string)
)

//export hoGoLog
func hoGoLog(level C.int, msg *C.char) {
	logMu.RLock()
	fn := logFn
	logMu.RUnlock()
	if fn != nil {
		fn(LogLevel(level), C.GoString(msg))
	}
}

// SetLogger sends the library's warnings (and debug lines) to fn instead
// of stderr (hipObjSetLogCallback); nil restores stderr. fn may run on any
// thread, several at once, possibly while another call of this package is
// in progress on that thread: it should only record or route the line,
// and must not call Init or Shutdown. It returns once the previous
// logger's calls have returned. Errors: Busy (called from a logger).
func SetLogger(fn func(level LogLevel, message string)) error {
	on := C.int(0)
	if fn != nil {
		on = 1
	}
	logMu.Lock()
	old := logFn
	logFn = fn
	logMu.Unlock()
	if err := check("hipObjSetLogCallback", C.ho_go_set_log(on)); err != nil {
		logMu.Lock()
		logFn = old
		logMu.Unlock()
		return err
	}
	return nil
}
