/* SPDX-License-Identifier: MIT */
/* Whole requests through the S3 layer (as http.c hands them over) on a
 * memory store: the input is "METHOD TARGET\n", header lines "name: value\n",
 * an empty line, then the body. The first byte's low bit turns SigV4 on.
 * Every request must end with a response and leave no leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hs_config cfg;
static struct hs_stats stats;
static struct hs_server srv;

static void init(void)
{
  struct hs_buf err;
  hs_buf_init(&err, 0);
  char *argv[] = {"fuzz", NULL};
  hs_config_parse(1, argv, &cfg, &err);
  hs_buf_free(&err);
  cfg.max_object_size = 1u << 16;
  cfg.max_xml_size = 1u << 14;
  cfg.max_header_size = 4096;
  cfg.min_part_size = 0;
  cfg.auth.max_clock_skew_s = 0;
  hs_stats_init(&stats);
  struct hs_store_config sc = {.max_object_size = cfg.max_object_size,
                               .max_buckets = 16, .max_uploads = 16};
  hs_store_open(&sc, &srv.store);
  hs_store_bucket_create(srv.store, "bkt");
  srv.cfg = &cfg;
  srv.stats = &stats;
}

#define MAX_HEADERS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static unsigned calls;
  if (srv.store && ++calls % 1000 == 0) {
    hs_store_close(srv.store); /* keep the memory store small */
    srv.store = NULL;
  }
  if (!srv.store)
    init();
  if (size == 0)
    return 0;
  cfg.auth.access_key = (data[0] & 1) ? "AK" : NULL;
  cfg.auth.secret_key = (data[0] & 1) ? "SK" : NULL;
  cfg.decline_rdma = data[0] & 2;
  char *in = malloc(size);
  memcpy(in, data + 1, size - 1);
  in[size - 1] = '\0';
  size_t n = size - 1;
  /* request line */
  char *nl = memchr(in, '\n', n);
  char *sp = memchr(in, ' ', nl ? (size_t)(nl - in) : n);
  if (!nl || !sp) {
    free(in);
    return 0;
  }
  *sp = '\0';
  *nl = '\0';
  const char *method = in, *target = sp + 1;
  struct hs_kv h[MAX_HEADERS];
  size_t nh = 0;
  char *p = nl + 1, *end = in + n;
  while (p < end && nh < MAX_HEADERS) {
    char *e = memchr(p, '\n', (size_t)(end - p));
    if (!e)
      break;
    *e = '\0';
    if (p == e) {
      p = e + 1;
      break;
    }
    char *c = strchr(p, ':');
    if (c) {
      *c = '\0';
      h[nh].name = p;
      h[nh].value = c[1] == ' ' ? c + 2 : c + 1;
      nh++;
    }
    p = e + 1;
  }
  size_t blen = p < end ? (size_t)(end - p) : 0;
  struct hs_request req = {.method = method, .target = target,
                           .headers = {h, nh}, .has_length = !(data[0] & 4),
                           .chunked = data[0] & 4, .content_length = blen};
  struct hs_op *op = hs_op_new(&srv, &req);
  if (op && hs_op_begin(op) == HS_STEP_BODY) {
    size_t step = 1 + (data[0] >> 3);
    for (size_t off = 0; off < blen; off += step)
      hs_op_body(op, p + off, blen - off < step ? blen - off : step);
    if (!(data[0] & 0x80))
      hs_op_end(op);
  }
  if (op) {
    struct hs_response *r = hs_op_response(op);
    if (r->status < 100 || r->status > 599)
      abort();
    if (r->source.read && r->length) {
      char buf[64];
      size_t k = r->length < sizeof buf ? (size_t)r->length : sizeof buf;
      if (r->source.read(r->source.ctx, buf, k) != (long)k)
        abort();
    }
  }
  hs_op_free(op);
  free(in);
  return 0;
}
