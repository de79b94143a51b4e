/* SPDX-License-Identifier: MIT */
#include "s3/control.h"

#include "common/log.h"

hipObjOpError_t ho_control_check_reply(const char *raw, size_t len,
                                       struct ho_reply *reply, int *status)
{
  *status = 0;
  if (!ho_reply_parse(raw, len, reply)) {
    ho_warn("malformed x-amz-rdma-reply (%zu bytes)", len);
    return hipObjS3Error;
  }
  *status = reply->status;
  if (reply->done || reply->rdma_failed)
    return hipObjSuccess; /* data first: the outcome itself, for the caller */
  if (!ho_status_is_success(reply->status))
    return hipObjS3Error;
  if (!reply->has_peer || reply->peer.transport != HO_TRANSPORT_RC) {
    ho_warn("server replied %d without an RC peer token: it does not speak "
            "the hipObject RC protocol, and nothing was transferred",
            reply->status);
    return hipObjS3Error;
  }
  return hipObjSuccess;
}

hipObjOpError_t ho_control_exchange(const hipObjOps_t *ops, void *ctx,
                                    const char *token, struct ho_reply *reply,
                                    int *status)
{
  char raw[HIPOBJ_REPLY_BUF_LEN];
  size_t len = sizeof raw;
  *status = 0;
  if (ops->sendRequest(ctx, token, HO_TOKEN_HEX) != 0)
    return hipObjS3Error;
  if (ops->recvReply(ctx, raw, &len) != 0)
    return hipObjS3Error;
  if (len > sizeof raw) {
    ho_warn("recvReply reported %zu bytes in a %zu-byte buffer", len, sizeof raw);
    return hipObjS3Error;
  }
  return ho_control_check_reply(raw, len, reply, status);
}
