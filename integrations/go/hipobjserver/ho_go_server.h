/* SPDX-License-Identifier: MIT */
/* The binding's C side: a request whose callbacks are the Go functions
 * hoGoSrvRead, hoGoSrvWrite, hoGoSrvCommit and hoGoSrvDone, the request's
 * cgo.Handle as their argument. */
#ifndef HO_GO_SERVER_H
#define HO_GO_SERVER_H

#include <stdint.h>

#include <hipobj_server.h>

hipObjServerStatus_t ho_go_srv_start(hipObjServer_t *srv,
                                     hipObjServerRequest_t *req, int stream,
                                     int commit, uintptr_t h,
                                     hipObjServerReply_t *reply,
                                     hipObjServerTransfer_t **xfer);

/* hipObjServerSetLogCallback() with the Go function hoGoSrvLog, or NULL. */
hipObjServerStatus_t ho_go_srv_set_log(int on);

#endif
