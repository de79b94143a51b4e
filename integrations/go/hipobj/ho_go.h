/* SPDX-License-Identifier: MIT */
/* The binding's C side: hipObjGet/hipObjPut with ops whose callbacks are
 * the Go functions hoGoSend and hoGoRecv, the call's cgo.Handle as ctx. */
#ifndef HO_GO_H
#define HO_GO_H

#include <stdint.h>
#include <sys/types.h>

#include <hipobj.h>

hipObjError_t ho_go_get(void *buf, size_t size, off_t offset, uintptr_t h);
hipObjError_t ho_go_put(void *buf, size_t size, off_t offset, uintptr_t h);
/* hipObjSetLogCallback() with the Go function hoGoLog, or NULL (stderr). */
hipObjError_t ho_go_set_log(int on);

#endif
