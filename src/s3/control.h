/* SPDX-License-Identifier: MIT */
/* Calling the application's hipObjOps_t callbacks: hand over the token, take
 * back the reply, parse it strictly. No library lock is held here. */
#ifndef HO_S3_CONTROL_H
#define HO_S3_CONTROL_H

#include "hipobj.h"
#include "rdma/token.h"

/* sendRequest(token), then recvReply() into a 512-byte buffer, parsed.
 * hipObjS3Error if a callback fails, the reply is malformed or not a
 * success; a success without a peer token is hipObjS3Error too (the server
 * does not speak the RC protocol). *status gets the parsed status when the
 * reply parsed (501: the server declined RDMA), else 0. */
hipObjOpError_t ho_control_exchange(const hipObjOps_t *ops, void *ctx,
                                    const char *token, struct ho_reply *reply,
                                    int *status);

/* The same checks for a reply the application hands over itself. */
hipObjOpError_t ho_control_check_reply(const char *raw, size_t len,
                                       struct ho_reply *reply, int *status);

#endif
