/* SPDX-License-Identifier: MIT */
/* The object operations: HEAD, GET (whole or a range) and PUT (one request
 * or a multipart upload). Each checks its arguments, learns what it needs
 * about the object, and hands the bytes to a transfer in parts. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static hipObjS3Status_t check_args(const hipObjS3Client_t *c,
                                   const char *bucket, const char *key,
                                   hipObjS3Result_t *res)
{
  if (!c)
    return ho_s3_fail(res, hipObjS3InvalidArgument, "no client");
  if (!ho_s3_bucket_ok(bucket))
    return ho_s3_fail(res, hipObjS3InvalidArgument, "invalid bucket name");
  if (!ho_s3_key_ok(key))
    return ho_s3_fail(res, hipObjS3InvalidArgument, "invalid key: it must "
                      "have 1 to 1024 bytes");
  return hipObjS3Ok;
}

/* ---- HEAD --------------------------------------------------------------- */

/* A HEAD error has no body: ask with a one-byte GET, whose error body names
 * the cause (NoSuchBucket or NoSuchKey, which signature check failed). */
static void explain_head_error(hipObjS3Client_t *c, const char *bucket,
                               const char *key, hipObjS3Result_t *res)
{
  struct ho_s3_req r;
  hipObjS3Result_t probe;
  ho_s3_result_clear(&probe);
  ho_s3_req_init(&r, c, "GET", bucket, key);
  r.has_range = true;
  r.range_first = 0;
  r.range_len = 1;
  CURLcode cc = ho_s3_req_perform(&r);
  if (ho_s3_req_outcome(&r, cc, &probe) != hipObjS3Ok && probe.s3Code[0] &&
      cc == CURLE_OK && r.status == res->httpStatus)
    *res = probe;
  ho_s3_req_cleanup(&r);
}

static hipObjS3Status_t head(hipObjS3Client_t *c, const char *bucket,
                             const char *key, hipObjS3Result_t *res)
{
  struct ho_s3_req r;
  ho_s3_req_init(&r, c, "HEAD", bucket, key);
  CURLcode cc = ho_s3_req_perform(&r);
  hipObjS3Status_t st = ho_s3_req_outcome(&r, cc, res);
  if (st == hipObjS3Ok && !r.have_length)
    st = ho_s3_fail(res, hipObjS3ProtocolError, "HEAD answered without "
                    "Content-Length");
  if (st == hipObjS3Ok) {
    res->objectSize = r.content_length;
    snprintf(res->etag, sizeof res->etag, "%s", r.etag);
  }
  ho_s3_req_cleanup(&r);
  if (st != hipObjS3Ok && cc == CURLE_OK && r.status >= 400 &&
      r.status < 500) {
    explain_head_error(c, bucket, key, res);
    st = res->status;
  }
  return st;
}

hipObjS3Status_t hipObjS3HeadObject(hipObjS3Client_t *c, const char *bucket,
                                    const char *key, hipObjS3Result_t *result)
{
  hipObjS3Result_t local;
  hipObjS3Result_t *res = result ? result : &local;
  ho_s3_result_clear(res);
  hipObjS3Status_t st = check_args(c, bucket, key, res);
  return st != hipObjS3Ok ? st : head(c, bucket, key, res);
}

/* ---- GET ---------------------------------------------------------------- */

static hipObjS3Status_t get_span(hipObjS3Client_t *c, const char *bucket,
                                 const char *key, uint64_t offset,
                                 uint64_t len, void *buf,
                                 hipObjS3MemKind_t mem, bool ranged,
                                 hipObjS3Result_t *res)
{
  struct ho_s3_xfer x;
  memset(&x, 0, sizeof x);
  x.client = c;
  x.op = HIPOBJ_RDMA_OP_GET;
  x.bucket = bucket;
  x.key = key;
  x.buf = buf;
  x.size = len;
  x.mem = mem;
  x.ranged = ranged;
  uint64_t object_size = res->objectSize;
  hipObjS3Status_t st = ho_s3_xfer_plan(&x, offset, false, res);
  if (st == hipObjS3Ok)
    st = ho_s3_xfer_run(&x, res);
  res->objectSize = object_size;
  ho_s3_xfer_free(&x);
  return st;
}

static hipObjS3Status_t check_buffer(const void *buf, uint64_t size,
                                     hipObjS3MemKind_t mem,
                                     hipObjS3Result_t *res)
{
  if (mem != hipObjS3MemHost && mem != hipObjS3MemDevice)
    return ho_s3_fail(res, hipObjS3InvalidArgument, "invalid memory kind");
  if (size > 0 && !buf)
    return ho_s3_fail(res, hipObjS3InvalidArgument, "no buffer");
  if (size > SIZE_MAX)
    return ho_s3_fail(res, hipObjS3InvalidArgument, "size too large");
  return hipObjS3Ok;
}

hipObjS3Status_t hipObjS3GetObject(hipObjS3Client_t *c, const char *bucket,
                                   const char *key, void *buf, size_t bufSize,
                                   hipObjS3MemKind_t mem,
                                   hipObjS3Result_t *result)
{
  hipObjS3Result_t local;
  hipObjS3Result_t *res = result ? result : &local;
  ho_s3_result_clear(res);
  hipObjS3Status_t st;
  if ((st = check_args(c, bucket, key, res)) ||
      (st = check_buffer(buf, bufSize, mem, res)) ||
      (st = head(c, bucket, key, res)))
    return st;
  uint64_t size = res->objectSize;
  if (size > bufSize)
    return ho_s3_fail(res, hipObjS3BufferTooSmall, "s3://%.255s/%.300s has "
                      "%" PRIu64 " bytes; the buffer holds %zu", bucket, key,
                      size, bufSize);
  if (size == 0)
    return hipObjS3Ok;
  return get_span(c, bucket, key, 0, size, buf, mem, false, res);
}

hipObjS3Status_t hipObjS3GetRange(hipObjS3Client_t *c, const char *bucket,
                                  const char *key, uint64_t offset, void *buf,
                                  size_t length, hipObjS3MemKind_t mem,
                                  hipObjS3Result_t *result)
{
  hipObjS3Result_t local;
  hipObjS3Result_t *res = result ? result : &local;
  ho_s3_result_clear(res);
  hipObjS3Status_t st;
  if ((st = check_args(c, bucket, key, res)) ||
      (st = check_buffer(buf, length, mem, res)))
    return st;
  if (length == 0)
    return ho_s3_fail(res, hipObjS3InvalidArgument, "empty range");
  if ((st = head(c, bucket, key, res)))
    return st;
  uint64_t size = res->objectSize;
  if (offset >= size || length > size - offset)
    return ho_s3_fail(res, hipObjS3InvalidRange, "bytes %" PRIu64 "+%zu lie "
                      "outside s3://%.255s/%.300s (%" PRIu64 " bytes)",
                      offset, length, bucket, key, size);
  return get_span(c, bucket, key, offset, length, buf, mem, true, res);
}

/* ---- PUT ---------------------------------------------------------------- */

static hipObjS3Status_t put_empty(hipObjS3Client_t *c, const char *bucket,
                                  const char *key, hipObjS3Result_t *res)
{
  struct ho_s3_req r;
  static const char nothing[1];
  ho_s3_req_init(&r, c, "PUT", bucket, key);
  r.src = HO_S3_SRC_HOST;
  r.src_ptr = nothing;
  r.src_len = 0;
  CURLcode cc = ho_s3_req_perform(&r);
  hipObjS3Status_t st = ho_s3_req_outcome(&r, cc, res);
  if (st == hipObjS3Ok) {
    snprintf(res->etag, sizeof res->etag, "%s", r.etag);
    res->partsHttp = 1;
  }
  ho_s3_req_cleanup(&r);
  return st;
}

static hipObjS3Status_t put_single(struct ho_s3_xfer *x, hipObjS3Result_t *res)
{
  hipObjS3Status_t st = ho_s3_xfer_plan(x, 0, false, res);
  if (st == hipObjS3Ok)
    st = ho_s3_xfer_run(x, res);
  if (st == hipObjS3Ok)
    snprintf(res->etag, sizeof res->etag, "%s", x->parts[0].etag);
  return st;
}

hipObjS3Status_t hipObjS3PutObject(hipObjS3Client_t *c, const char *bucket,
                                   const char *key, const void *buf,
                                   size_t size, hipObjS3MemKind_t mem,
                                   hipObjS3Result_t *result)
{
  hipObjS3Result_t local;
  hipObjS3Result_t *res = result ? result : &local;
  ho_s3_result_clear(res);
  hipObjS3Status_t st;
  if ((st = check_args(c, bucket, key, res)) ||
      (st = check_buffer(buf, size, mem, res)))
    return st;
  if (size == 0)
    return put_empty(c, bucket, key, res);
  struct ho_s3_xfer x;
  memset(&x, 0, sizeof x);
  x.client = c;
  x.op = HIPOBJ_RDMA_OP_PUT;
  x.bucket = bucket;
  x.key = key;
  x.buf = (char *)(uintptr_t)buf; /* only read */
  x.size = size;
  x.mem = mem;
  if (size <= c->s.part_size)
    st = put_single(&x, res);
  else
    st = ho_s3_multipart_put(&x, res);
  ho_s3_xfer_free(&x);
  return st;
}

/* ---- DELETE ------------------------------------------------------------- */

hipObjS3Status_t hipObjS3DeleteObject(hipObjS3Client_t *c, const char *bucket,
                                      const char *key,
                                      hipObjS3Result_t *result)
{
  hipObjS3Result_t local;
  hipObjS3Result_t *res = result ? result : &local;
  ho_s3_result_clear(res);
  hipObjS3Status_t st = check_args(c, bucket, key, res);
  if (st != hipObjS3Ok)
    return st;
  struct ho_s3_req r;
  ho_s3_req_init(&r, c, "DELETE", bucket, key);
  CURLcode cc = ho_s3_req_perform(&r);
  st = ho_s3_req_outcome(&r, cc, res);
  ho_s3_req_cleanup(&r);
  return st;
}
