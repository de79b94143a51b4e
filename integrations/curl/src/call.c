/* SPDX-License-Identifier: MIT */
/* One S3 request as hipObjOps_t: sendRequest sends it with the token and
 * waits for the response headers (the body of an RDMA request is empty);
 * recvReply hands x-amz-rdma-reply back. A missing reply is a failure,
 * never success; a 501 passes its reply through so that hipObjGet() reports
 * the decline and the caller can fall back explicitly. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "common/le.h"
#include "internal.h"

/* The token's length field (bytes 33..40, little-endian; docs/protocol.md):
 * the bytes the server must move. */
static bool token_length(const char *tok, uint64_t *out)
{
  uint8_t b[8];
  if (!ho_hex_decode(tok + 2 * 33, 2 * sizeof b, b, sizeof b))
    return false;
  *out = ho_get_le(b, (int)sizeof b);
  return true;
}

static bool make_query(struct hipObjS3Call *call)
{
  const hipObjS3CallSpec_t *sp = &call->spec;
  char enc[sizeof call->upload_id * 3 + 1];
  if (!sp->uploadId)
    return true;
  if (!ho_s3_uri_encode(sp->uploadId, strlen(sp->uploadId), false, enc,
                        sizeof enc))
    return false;
  int n = snprintf(call->query, sizeof call->query,
                   "partNumber=%u&uploadId=%s", sp->partNumber, enc);
  return n > 0 && (size_t)n < sizeof call->query;
}

bool ho_s3_call_setup(struct hipObjS3Call *call, hipObjS3Client_t *c,
                      const hipObjS3CallSpec_t *spec)
{
  memset(call, 0, sizeof *call);
  call->client = c;
  call->spec = *spec;
  snprintf(call->bucket, sizeof call->bucket, "%s", spec->bucket);
  snprintf(call->key, sizeof call->key, "%s", spec->key);
  call->spec.bucket = call->bucket;
  call->spec.key = call->key;
  if (spec->uploadId) {
    snprintf(call->upload_id, sizeof call->upload_id, "%s", spec->uploadId);
    call->spec.uploadId = call->upload_id;
  }
  bool get = spec->op == HIPOBJ_RDMA_OP_GET;
  struct ho_s3_req *r = &call->req;
  ho_s3_req_init(r, c, get ? "GET" : "PUT", call->bucket, call->key);
  r->sink = HO_S3_SINK_NONE;
  r->src = HO_S3_SRC_NONE;
  if (get && spec->length) {
    r->has_range = true;
    r->range_first = spec->offset;
    r->range_len = spec->length;
  }
  ho_s3_result_clear(&call->res);
  return make_query(call);
}

void ho_s3_call_teardown(struct hipObjS3Call *call)
{
  ho_s3_req_cleanup(&call->req);
}

bool ho_s3_call_declined(const struct hipObjS3Call *call)
{
  int code = 0;
  const struct ho_s3_req *r = &call->req;
  if (!call->sent || !r->have_reply || r->reply_too_long)
    return false;
  hipObjError_t e = hipObjParseRdmaReply(r->reply, r->reply_len, &code);
  return e.opError == hipObjSuccess &&
         code == HIPOBJ_RDMA_REPLY_NOT_IMPLEMENTED;
}

static int failed(struct hipObjS3Call *call, hipObjS3Status_t st)
{
  call->failure = st;
  return 1;
}

/* The server's RDMA failed in a data-first transfer (docs/protocol.md,
 * section 5): the reply is for hipObject, which retries on a new
 * connection. */
static bool rdma_failed_reply(const struct ho_s3_req *r)
{
  static const char f[] = HIPOBJ_RDMA_REPLY_RDMA_FAILED;
  return r->have_reply && !r->reply_too_long && r->reply_len == sizeof f - 1 &&
         memcmp(r->reply, f, sizeof f - 1) == 0;
}

static int send_request(void *ctx, const char *token, size_t token_len)
{
  struct hipObjS3Call *call = ctx;
  char tok[HIPOBJ_TOKEN_LEN + 1];
  if (!call)
    return 1;
  if (call->failure) /* a callback already failed: nothing is retried */
    return 1;
  /* Sent again: hipObject retries a transfer that failed for a fabric
   * reason with a new token (docs/protocol.md, section 7); the response
   * state is reset by the new response's status line. */
  call->sent = 1;
  if (!token || token_len != HIPOBJ_TOKEN_LEN ||
      !token_length(token, &call->expect))
    return failed(call, ho_s3_fail(&call->res, hipObjS3ProtocolError,
                                   "hipObject gave a malformed token"));
  memcpy(tok, token, HIPOBJ_TOKEN_LEN);
  tok[HIPOBJ_TOKEN_LEN] = '\0';
  struct ho_s3_req *r = &call->req;
  r->token = tok;
  r->query = call->query[0] ? call->query : NULL;
  call->cc = ho_s3_req_perform(r);
  r->token = NULL;
  hipObjS3Status_t st = ho_s3_req_outcome(r, call->cc, &call->res);
  if (st == hipObjS3Ok)
    return 0;
  if (r->status == HIPOBJ_RDMA_REPLY_NOT_IMPLEMENTED && r->have_reply &&
      call->cc == CURLE_OK) {
    ho_s3_result_clear(&call->res); /* declined: the reply says so */
    return 0;
  }
  if (rdma_failed_reply(r) && call->cc == CURLE_OK) {
    ho_s3_result_clear(&call->res); /* hipObject tries again, or says why */
    return 0;
  }
  return failed(call, st);
}

static int no_reply(struct hipObjS3Call *call)
{
  const struct ho_s3_req *r = &call->req;
  char what[80];
  snprintf(what, sizeof what, "%s", call->spec.op == HIPOBJ_RDMA_OP_PUT
                                        ? "; it may have stored an empty "
                                          "object"
                                        : "");
  return failed(call, ho_s3_fail(&call->res, hipObjS3ProtocolError,
                                 "the server answered HTTP %ld without "
                                 "x-amz-rdma-reply: it ignored the RDMA "
                                 "token%s; use plain HTTP (--no-rdma)",
                                 r->status, what));
}

static int recv_reply(void *ctx, char *reply, size_t *reply_len)
{
  struct hipObjS3Call *call = ctx;
  if (!call || !reply || !reply_len)
    return 1;
  const struct ho_s3_req *r = &call->req;
  if (!call->sent || call->failure)
    return 1;
  if (r->reply_too_long)
    return failed(call, ho_s3_fail(&call->res, hipObjS3ProtocolError,
                                   "x-amz-rdma-reply was repeated or longer "
                                   "than %d bytes", HIPOBJ_REPLY_BUF_LEN - 1));
  if (!r->have_reply)
    return no_reply(call);
  bool declined = r->status == HIPOBJ_RDMA_REPLY_NOT_IMPLEMENTED;
  if (!declined && r->have_xfer &&
      (r->xfer_bad || r->xfer_bytes != call->expect))
    return failed(call, ho_s3_fail(&call->res, hipObjS3ProtocolError,
                                   "the server announced %" PRIu64
                                   " bytes (x-amz-rdma-bytes-transferred) "
                                   "for a transfer of %" PRIu64,
                                   r->xfer_bytes, call->expect));
  if (*reply_len < r->reply_len + 1)
    return failed(call, ho_s3_fail(&call->res, hipObjS3ProtocolError,
                                   "x-amz-rdma-reply too long"));
  memcpy(reply, r->reply, r->reply_len);
  reply[r->reply_len] = '\0';
  *reply_len = r->reply_len;
  return 0;
}

static const hipObjOps_t call_ops = {
    .sendRequest = send_request,
    .recvReply = recv_reply,
};

const hipObjOps_t *hipObjS3CallOps(void) { return &call_ops; }

hipObjS3Status_t hipObjS3CallCreate(hipObjS3Client_t *client,
                                    const hipObjS3CallSpec_t *spec,
                                    hipObjS3Call_t **out)
{
  if (!client || !spec || !out || !ho_s3_bucket_ok(spec->bucket) ||
      !ho_s3_key_ok(spec->key))
    return hipObjS3InvalidArgument;
  if (spec->op != HIPOBJ_RDMA_OP_GET && spec->op != HIPOBJ_RDMA_OP_PUT)
    return hipObjS3InvalidArgument;
  if (spec->uploadId && (spec->op != HIPOBJ_RDMA_OP_PUT ||
                         spec->partNumber < 1 ||
                         spec->partNumber > HO_S3_MAX_PARTS ||
                         strlen(spec->uploadId) >= 1024))
    return hipObjS3InvalidArgument;
  hipObjS3Call_t *call = malloc(sizeof *call);
  if (!call)
    return hipObjS3OutOfMemory;
  if (!ho_s3_call_setup(call, client, spec)) {
    free(call);
    return hipObjS3InvalidArgument;
  }
  *out = call;
  return hipObjS3Ok;
}

/* What the transfer's failure means, when no callback saw a reason. */
static hipObjS3Status_t transfer_failure(struct hipObjS3Call *call,
                                         hipObjError_t e,
                                         hipObjS3Result_t *res)
{
  const struct ho_s3_req *r = &call->req;
  res->rdmaError = e.opError;
  if (e.opError == hipObjS3Error && r->have_reply)
    return ho_s3_fail(res, hipObjS3ProtocolError, "the server's RDMA reply "
                      "is not usable (x-amz-rdma-reply: %.40s, HTTP %ld): it "
                      "names no peer to connect to, as docs/protocol.md "
                      "requires", r->reply, r->status);
  if (e.opError == hipObjRdmaError)
    return ho_s3_fail(res, hipObjS3RdmaFailed, "the RDMA transfer failed "
                      "(%s; the hipobj: line above has the cause): check the "
                      "fabric between this host and the server, or use "
                      "plain HTTP (--no-rdma)",
                      hipObjGetErrorString(e.opError));
  return ho_s3_fail(res, hipObjS3RdmaFailed, "hipObject could not run the "
                    "transfer: %s", hipObjGetErrorString(e.opError));
}

hipObjS3Status_t hipObjS3CallResult(hipObjS3Call_t *call,
                                    hipObjError_t transfer,
                                    hipObjS3Result_t *result)
{
  hipObjS3Result_t local;
  hipObjS3Result_t *res = result ? result : &local;
  ho_s3_result_clear(res);
  if (!call)
    return ho_s3_fail(res, hipObjS3InvalidArgument, "no call");
  res->httpStatus = call->req.status;
  if (transfer.opError == hipObjSuccess && call->sent && !call->failure) {
    res->bytes = call->expect;
    res->partsRdma = 1;
    snprintf(res->etag, sizeof res->etag, "%s", call->req.etag);
    return hipObjS3Ok;
  }
  if (call->failure) {
    *res = call->res;
    res->rdmaError = transfer.opError;
    res->status = call->failure;
    return call->failure;
  }
  if (ho_s3_call_declined(call)) {
    res->rdmaError = transfer.opError;
    return ho_s3_fail(res, hipObjS3RdmaDeclined, "the server declined RDMA "
                      "(x-amz-rdma-reply: 501)");
  }
  return transfer_failure(call, transfer, res);
}

void hipObjS3CallDestroy(hipObjS3Call_t *call)
{
  if (!call)
    return;
  ho_s3_call_teardown(call);
  free(call);
}
