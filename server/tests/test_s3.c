/* SPDX-License-Identifier: MIT */
/* The S3 layer driven as http.c drives it, without a socket: routing,
 * errors, bodies cut short or too long, aws-chunked with AWS's chunk
 * signatures, payload hashes, RDMA token answers, the lister. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store/lister.h"
#include "s3_internal.h"

struct env {
  struct hs_config cfg;
  struct hs_stats stats;
  struct hs_server srv;
};

static int setup_with(void **state, const char *ak, const char *sk)
{
  struct env *e = calloc(1, sizeof *e);
  struct hs_buf err;
  hs_buf_init(&err, 0);
  char *argv[] = {"x", NULL};
  if (hs_config_parse(1, argv, &e->cfg, &err) != HS_CONFIG_OK)
    return -1;
  e->cfg.auth.access_key = ak;
  e->cfg.auth.secret_key = sk;
  e->cfg.auth.max_clock_skew_s = 0; /* the AWS examples are from 2013 */
  e->cfg.max_object_size = 1u << 20;
  e->cfg.max_header_size = 4096;
  hs_stats_init(&e->stats);
  struct hs_store_config sc = {.max_object_size = e->cfg.max_object_size,
                               .min_part_size = 0};
  if (hs_store_open(&sc, &e->srv.store))
    return -1;
  e->srv.cfg = &e->cfg;
  e->srv.stats = &e->stats;
  *state = e;
  return 0;
}

static int setup(void **state)
{
  return setup_with(state, NULL, NULL);
}

static int setup_auth(void **state)
{
  return setup_with(state, "AKIAIOSFODNN7EXAMPLE",
                    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
}

static int teardown(void **state)
{
  struct env *e = *state;
  hs_store_close(e->srv.store);
  free(e);
  return 0;
}

struct call {
  const char *method;
  const char *target;
  struct hs_kv h[12];
  const char *body;
  size_t blen;
  size_t piece; /* feed the body this many bytes at a time (0: at once) */
  bool cut;     /* stop before the end, as a client that goes away */
  bool no_length;
};

static size_t nheaders(const struct call *c)
{
  size_t n = 0;
  while (n < 12 && c->h[n].name)
    n++;
  return n;
}

/* Runs the call; returns the op (to inspect, then hs_op_free). */
static struct hs_op *run(struct env *e, const struct call *c)
{
  struct hs_request req = {.method = c->method,
                           .target = c->target,
                           .headers = {c->h, nheaders(c)},
                           .has_length = !c->no_length,
                           .chunked = c->no_length,
                           .content_length = c->blen,
                           .peer = "test"};
  struct hs_op *op = hs_op_new(&e->srv, &req);
  assert_non_null(op);
  if (hs_op_begin(op) == HS_STEP_BODY) {
    size_t step = c->piece ? c->piece : (c->blen ? c->blen : 1);
    size_t end = c->cut ? c->blen / 2 : c->blen;
    for (size_t off = 0; off < end; off += step)
      hs_op_body(op, c->body + off, end - off < step ? end - off : step);
    if (c->cut)
      return op;
    hs_op_end(op);
  }
  return op;
}

static const char *resp_header(const struct hs_response *r, const char *name)
{
  size_t pos = 0;
  const char *n, *v;
  while (hs_resp_next_header(r, &pos, &n, &v))
    if (strcasecmp(n, name) == 0)
      return v;
  return NULL;
}

/* status, and the S3 error code if any */
static unsigned status_of(struct hs_op *op, const char **code)
{
  struct hs_response *r = hs_op_response(op);
  static char buf[64];
  buf[0] = '\0';
  const char *b = hs_buf_cstr(&r->body);
  const char *s = strstr(b, "<Code>");
  if (s) {
    s += 6;
    const char *t = strstr(s, "</Code>");
    snprintf(buf, sizeof buf, "%.*s", (int)(t - s), s);
  }
  if (code)
    *code = buf;
  return r->status;
}

static void expect(struct env *e, const struct call *c, unsigned status,
                   const char *code)
{
  struct hs_op *op = run(e, c);
  const char *got;
  unsigned st = status_of(op, &got);
  if (st != status || (code && strcmp(got, code) != 0))
    fail_msg("%s %s: %u %s, want %u %s", c->method, c->target, st, got, status,
             code ? code : "");
  hs_op_free(op);
}

static char *read_all(struct hs_response *r)
{
  char *b = malloc(r->length + 1);
  assert_non_null(r->source.read);
  assert_int_equal(r->source.read(r->source.ctx, b, r->length),
                   (long)r->length);
  b[r->length] = '\0';
  return b;
}

/* ---- tests ----------------------------------------------------------------
 */

static void routing(void **state)
{
  struct hs_query q;
  struct {
    const char *m, *query;
    bool b, k, copy;
    enum hs_s3_kind want;
  } t[] = {
      {"GET", "", false, false, false, HS_OP_LIST_BUCKETS},
      {"PUT", "", false, false, false, HS_OP_METHOD_NOT_ALLOWED},
      {"PUT", "", true, false, false, HS_OP_CREATE_BUCKET},
      {"HEAD", "", true, false, false, HS_OP_HEAD_BUCKET},
      {"DELETE", "", true, false, false, HS_OP_DELETE_BUCKET},
      {"GET", "", true, false, false, HS_OP_LIST_OBJECTS},
      {"GET", "list-type=2&prefix=a", true, false, false,
       HS_OP_LIST_OBJECTS_V2},
      {"GET", "list-type=3", true, false, false, HS_OP_NOT_IMPLEMENTED},
      {"GET", "location", true, false, false, HS_OP_GET_LOCATION},
      {"GET", "versioning", true, false, false, HS_OP_GET_VERSIONING},
      {"GET", "uploads", true, false, false, HS_OP_LIST_UPLOADS},
      {"GET", "acl", true, false, false, HS_OP_GET_ACL},
      {"PUT", "acl", true, false, false, HS_OP_PUT_ACL},
      {"PUT", "acl", true, true, false, HS_OP_PUT_ACL},
      {"DELETE", "acl", true, true, false, HS_OP_METHOD_NOT_ALLOWED},
      {"GET", "acl&policy", true, false, false, HS_OP_NOT_IMPLEMENTED},
      {"GET", "policy", true, false, false, HS_OP_NOT_IMPLEMENTED},
      {"GET", "policy", true, false, false, HS_OP_NOT_IMPLEMENTED},
      {"PUT", "cors", true, false, false, HS_OP_NOT_IMPLEMENTED},
      {"POST", "delete", true, false, false, HS_OP_DELETE_OBJECTS},
      {"POST", "", true, false, false, HS_OP_NOT_IMPLEMENTED},
      {"GET", "", true, true, false, HS_OP_GET_OBJECT},
      {"GET", "x-id=GetObject&response-content-type=a", true, true, false,
       HS_OP_GET_OBJECT},
      {"HEAD", "", true, true, false, HS_OP_HEAD_OBJECT},
      {"PUT", "", true, true, false, HS_OP_PUT_OBJECT},
      {"PUT", "", true, true, true, HS_OP_COPY_OBJECT},
      {"PUT", "tagging", true, true, false, HS_OP_PUT_OBJECT_TAGGING},
      {"DELETE", "tagging", true, true, false, HS_OP_DELETE_OBJECT_TAGGING},
      {"POST", "tagging", true, true, false, HS_OP_METHOD_NOT_ALLOWED},
      {"GET", "attributes", true, true, false, HS_OP_GET_OBJECT_ATTRIBUTES},
      {"GET", "attributes&acl", true, true, false, HS_OP_NOT_IMPLEMENTED},
      {"HEAD", "partNumber=2", true, true, false, HS_OP_HEAD_OBJECT},
      {"DELETE", "", true, true, false, HS_OP_DELETE_OBJECT},
      {"POST", "uploads", true, true, false, HS_OP_CREATE_UPLOAD},
      {"PUT", "partNumber=1&uploadId=x", true, true, false, HS_OP_UPLOAD_PART},
      {"PUT", "partNumber=1&uploadId=x", true, true, true,
       HS_OP_UPLOAD_PART_COPY},
      {"GET", "tagging", true, true, false, HS_OP_GET_OBJECT_TAGGING},
      {"GET", "versions", true, false, false, HS_OP_LIST_VERSIONS},
      {"DELETE", "versionId=null", true, true, false, HS_OP_DELETE_OBJECT},
      {"GET", "versionId=null", true, true, false, HS_OP_GET_OBJECT},
      {"GET", "versionId=3HL4kqtJ", true, true, false, HS_OP_NOT_IMPLEMENTED},
      {"GET", "tagging&acl", true, true, false, HS_OP_NOT_IMPLEMENTED},
      {"PUT", "uploadId=x", true, true, false, HS_OP_NOT_IMPLEMENTED},
      {"POST", "uploadId=x", true, true, false, HS_OP_COMPLETE_UPLOAD},
      {"DELETE", "uploadId=x", true, true, false, HS_OP_ABORT_UPLOAD},
      {"GET", "uploadId=x", true, true, false, HS_OP_LIST_PARTS},
      {"GET", "versionId=1", true, true, false, HS_OP_NOT_IMPLEMENTED},
      {"GET", "partNumber=1", true, true, false, HS_OP_GET_OBJECT},
      {"GET", "partNumber=1&acl", true, true, false, HS_OP_NOT_IMPLEMENTED},
      {"PATCH", "", true, true, false, HS_OP_METHOD_NOT_ALLOWED},
      {"POST", "", true, true, false, HS_OP_METHOD_NOT_ALLOWED},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    assert_int_equal(hs_query_parse(t[i].query, strlen(t[i].query), &q), HS_OK);
    enum hs_s3_kind k = hs_s3_route(t[i].m, t[i].b, t[i].k, &q, t[i].copy);
    if (k != t[i].want)
      fail_msg("#%zu %s ?%s: %s, want %s", i, t[i].m, t[i].query,
               hs_s3_kind_name(k), hs_s3_kind_name(t[i].want));
    hs_query_free(&q);
  }
  assert_int_equal(hs_admin_route("GET", "/_hipobj/stats", 14),
                   HS_OP_ADMIN_STATS);
  assert_int_equal(hs_admin_route("GET", "/_hipobj/stats?x", 16),
                   HS_OP_ADMIN_STATS);
  assert_int_equal(hs_admin_route("PUT", "/_hipobj/stats", 14),
                   HS_OP_METHOD_NOT_ALLOWED);
  assert_int_equal(hs_admin_route("GET", "/_hipobj/x", 10),
                   HS_OP_NOT_IMPLEMENTED);
  assert_int_equal(hs_admin_route("GET", "/bucket", 7), HS_OP_NOT_FOUND);
}

static void objects_and_errors(void **state)
{
  struct env *e = *state;
  expect(e, &(struct call){.method = "PUT", .target = "/bkt"}, 200, NULL);
  /* us-east-1: your own bucket again is 200; another region, 409 */
  expect(e, &(struct call){.method = "PUT", .target = "/bkt"}, 200, NULL);
  e->cfg.auth.region = "eu-west-1";
  expect(e, &(struct call){.method = "PUT", .target = "/bkt"}, 409,
         "BucketAlreadyOwnedByYou");
  e->cfg.auth.region = "us-east-1";
  struct call put = {.method = "PUT",
                     .target = "/bkt/a%20b?ignored",
                     .h = {{"Content-Type", "t/x"}, {"x-amz-meta-Who", "me"}},
                     .body = "0123456789",
                     .blen = 10,
                     .piece = 3};
  struct hs_op *op = run(e, &put);
  assert_int_equal(status_of(op, NULL), 200);
  assert_string_equal(resp_header(hs_op_response(op), "ETag"),
                      "\"781e5e245d69b566979b86e28d23f2c7\"");
  assert_non_null(resp_header(hs_op_response(op), "x-amz-request-id"));
  hs_op_free(op);
  op = run(e, &(struct call){.method = "GET",
                             .target = "/bkt/a%20b",
                             .h = {{"Range", "bytes=2-4"}}});
  struct hs_response *r = hs_op_response(op);
  assert_int_equal(r->status, 206);
  assert_string_equal(resp_header(r, "Content-Range"), "bytes 2-4/10");
  assert_string_equal(resp_header(r, "Content-Type"), "t/x");
  assert_string_equal(resp_header(r, "x-amz-meta-who"), "me");
  char *b = read_all(r);
  assert_string_equal(b, "234");
  free(b);
  hs_op_free(op);
  op = run(e, &(struct call){.method = "HEAD", .target = "/bkt/a%20b"});
  r = hs_op_response(op);
  assert_true(r->head);
  assert_int_equal(r->head_length, 10);
  assert_null(r->source.read);
  hs_op_free(op);
  /* errors: XML with the code, the key, the request id; none for HEAD */
  op = run(e, &(struct call){.method = "GET", .target = "/bkt/missing"});
  r = hs_op_response(op);
  assert_int_equal(r->status, 404);
  const char *body = hs_buf_cstr(&r->body);
  assert_non_null(strstr(body, "<Code>NoSuchKey</Code>"));
  assert_non_null(strstr(body, "<Key>missing</Key>"));
  assert_non_null(strstr(body, "<BucketName>bkt</BucketName>"));
  assert_non_null(strstr(body, "<RequestId>"));
  assert_string_equal(resp_header(r, "Content-Type"), "application/xml");
  hs_op_free(op);
  op = run(e, &(struct call){.method = "HEAD", .target = "/bkt/missing"});
  r = hs_op_response(op);
  assert_int_equal(r->status, 404);
  assert_int_equal(r->body.len, 0);
  hs_op_free(op);
  expect(e, &(struct call){.method = "GET", .target = "/BKT/x"}, 400,
         "InvalidBucketName");
  expect(e, &(struct call){.method = "GET", .target = "/bkt/%zz"}, 400,
         "InvalidURI");
  expect(e, &(struct call){.method = "GET", .target = "/bkt/x?%zz"}, 400,
         "InvalidURI");
  expect(e,
         &(struct call){
             .method = "GET", .target = "/bkt/a%20b", .h = {{"x-big", "x"}}},
         200, NULL);
  char big[5000];
  memset(big, 'v', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  expect(e,
         &(struct call){
             .method = "GET", .target = "/bkt/a%20b", .h = {{"x-big", big}}},
         431, "RequestHeaderSectionTooLarge");
  expect(e,
         &(struct call){.method = "GET",
                        .target = "/bkt/a%20b",
                        .h = {{"Range", "bytes=10-"}}},
         416, "InvalidRange");
  expect(e,
         &(struct call){.method = "GET",
                        .target = "/bkt/a%20b",
                        .h = {{"If-Match", "\"nope\""}}},
         412, "PreconditionFailed");
  expect(e,
         &(struct call){.method = "GET",
                        .target = "/bkt/a%20b",
                        .h = {{"If-None-Match", "*"}}},
         304, NULL);
  expect(e,
         &(struct call){
             .method = "GET",
             .target = "/bkt/a%20b",
             .h = {{"If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT"}}},
         304, NULL);
  expect(e,
         &(struct call){
             .method = "GET",
             .target = "/bkt/a%20b",
             .h = {{"If-Unmodified-Since", "Fri, 01 Jan 1999 00:00:00 GMT"}}},
         412, "PreconditionFailed");
  expect(e, &(struct call){.method = "DELETE", .target = "/bkt"}, 409,
         "BucketNotEmpty");
  expect(e, &(struct call){.method = "GET", .target = "/bkt?policy"}, 501,
         "NotImplemented");
  /* ACLs: the one owner's full control, read; canned private, accepted;
   * an ACL document or another canned ACL, refused */
  struct hs_op *acl = run(e, &(struct call){.method = "GET",
                                            .target = "/bkt?acl"});
  assert_int_equal(hs_op_response(acl)->status, 200);
  assert_non_null(strstr(hs_buf_cstr(&hs_op_response(acl)->body),
                         "<Permission>FULL_CONTROL</Permission>"));
  hs_op_free(acl);
  expect(e, &(struct call){.method = "GET", .target = "/bkt/none?acl"}, 404,
         "NoSuchKey");
  expect(e,
         &(struct call){.method = "PUT",
                        .target = "/bkt?acl",
                        .h = {{"x-amz-acl", "private"}}},
         200, NULL);
  expect(e,
         &(struct call){.method = "PUT",
                        .target = "/bkt?acl",
                        .h = {{"x-amz-acl", "public-read"}}},
         501, "NotImplemented");
  expect(e,
         &(struct call){.method = "PUT",
                        .target = "/bkt?acl",
                        .body = "<AccessControlPolicy/>",
                        .blen = 22},
         501, "NotImplemented");
  expect(e, &(struct call){.method = "PATCH", .target = "/bkt/x"}, 405,
         "MethodNotAllowed");
  expect(e, &(struct call){.method = "GET", .target = "/_hipobj/nothing"}, 404,
         "NoSuchKey");
}

static void bodies(void **state)
{
  struct env *e = *state;
  expect(e, &(struct call){.method = "PUT", .target = "/bkt"}, 200, NULL);
  /* larger than the limit: refused before the body */
  struct call big = {.method = "PUT",
                     .target = "/bkt/big",
                     .h = {{0}},
                     .body = "",
                     .blen = (1u << 20) + 1};
  struct hs_op *op =
      hs_op_new(&e->srv, &(struct hs_request){.method = "PUT",
                                              .target = "/bkt/big",
                                              .has_length = true,
                                              .content_length = big.blen});
  assert_int_equal(hs_op_begin(op), HS_STEP_RESPOND);
  assert_int_equal(status_of(op, NULL), 413);
  hs_op_free(op);
  /* chunked (no length) and too long: refused while reading */
  char *data = calloc(1, (1u << 20) + 10);
  struct call chunked = {.method = "PUT",
                         .target = "/bkt/big",
                         .h = {{0}},
                         .body = data,
                         .blen = (1u << 20) + 10,
                         .piece = 65536,
                         .no_length = true};
  op = run(e, &chunked);
  const char *code;
  assert_int_equal(status_of(op, &code), 413);
  assert_string_equal(code, "EntityTooLarge");
  hs_op_free(op);
  free(data);
  expect(e, &(struct call){.method = "GET", .target = "/bkt/big"}, 404,
         "NoSuchKey");
  /* cut short: nothing is stored, the abort is counted */
  uint64_t aborted = e->stats.aborted_bodies;
  op = run(e, &(struct call){.method = "PUT",
                             .target = "/bkt/cut",
                             .h = {{0}},
                             .body = "0123456789",
                             .blen = 10,
                             .cut = true});
  hs_op_free(op);
  assert_int_equal(e->stats.aborted_bodies, aborted + 1);
  expect(e, &(struct call){.method = "GET", .target = "/bkt/cut"}, 404,
         "NoSuchKey");
  /* fewer bytes than Content-Length, then the end */
  struct hs_request rq = {.method = "PUT",
                          .target = "/bkt/short",
                          .has_length = true,
                          .content_length = 10};
  op = hs_op_new(&e->srv, &rq);
  assert_int_equal(hs_op_begin(op), HS_STEP_BODY);
  hs_op_body(op, "abc", 3);
  hs_op_end(op);
  assert_int_equal(status_of(op, &code), 400);
  assert_string_equal(code, "IncompleteBody");
  hs_op_free(op);
  /* x-amz-content-sha256 is checked even without authentication */
  expect(
      e,
      &(struct call){.method = "PUT",
                     .target = "/bkt/sha",
                     .h = {{"x-amz-content-sha256",
                            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c"
                            "a495991b7852b855"}},
                     .body = "not empty",
                     .blen = 9},
      400, "XAmzContentSHA256Mismatch");
  expect(e,
         &(struct call){.method = "PUT",
                        .target = "/bkt/sha",
                        .h = {{"x-amz-content-sha256", "garbage"}},
                        .body = "x",
                        .blen = 1},
         400, "InvalidArgument");
  expect(e,
         &(struct call){.method = "PUT",
                        .target = "/bkt/md5",
                        .h = {{"Content-MD5", "AAAAAAAAAAAAAAAAAAAAAA=="}},
                        .body = "x",
                        .blen = 1},
         400, "BadDigest");
  expect(e, &(struct call){.method = "GET", .target = "/bkt/sha"}, 404,
         "NoSuchKey");
  /* a stray body on a GET is read and dropped, up to a limit */
  expect(e,
         &(struct call){.method = "GET",
                        .target = "/bkt",
                        .h = {{0}},
                        .body = "junk",
                        .blen = 4},
         200, NULL);
}

/* AWS's "Transfer Payload in Multiple Chunks" example, end to end. */
static char *aws_chunked_body(size_t *len, bool tamper)
{
  size_t cap = 70000;
  char *b = malloc(cap);
  size_t n = 0;
  n += (size_t)snprintf(b + n, cap - n,
                        "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd6"
                        "3b9a0e99e0e2307b0ade35a65485a288648\r\n");
  memset(b + n, 'a', 65536);
  if (tamper)
    b[n + 100] = 'b';
  n += 65536;
  n += (size_t)snprintf(b + n, cap - n,
                        "\r\n400;chunk-signature=0055627c9e194cb4542bae2aa549"
                        "2e3c1575bbb81b612b7d234b86a503ef5497\r\n");
  memset(b + n, 'a', 1024);
  n += 1024;
  n += (size_t)snprintf(b + n, cap - n,
                        "\r\n0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4"
                        "275b71ea724fed81ceb9323e279d449df9\r\n\r\n");
  *len = n;
  return b;
}

static void streaming_signed(void **state)
{
  struct env *e = *state;
  /* the bucket, created by a request signed here by the same rules */
  struct hs_op *op;
  hs_store_bucket_create(e->srv.store, "examplebucket");
  for (int tamper = 0; tamper < 2; tamper++) {
    size_t len;
    char *body = aws_chunked_body(&len, tamper);
    assert_int_equal(len, 66824);
    struct call c = {
        .method = "PUT",
        .target = "/examplebucket/chunkObject.txt",
        .h = {{"Host", "s3.amazonaws.com"},
              {"x-amz-date", "20130524T000000Z"},
              {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
              {"Authorization",
               "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/"
               "us-east-1/s3/aws4_request,SignedHeaders=content-encoding;"
               "content-length;host;x-amz-content-sha256;x-amz-date;"
               "x-amz-decoded-content-length;x-amz-storage-class,Signature="
               "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a"
               "9"},
              {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
              {"Content-Encoding", "aws-chunked"},
              {"x-amz-decoded-content-length", "66560"},
              {"Content-Length", "66824"}},
        .body = body,
        .blen = len,
        .piece = 1000};
    op = run(e, &c);
    const char *code;
    unsigned st = status_of(op, &code);
    hs_op_free(op);
    free(body);
    if (tamper) {
      assert_int_equal(st, 403);
      assert_string_equal(code, "SignatureDoesNotMatch");
    } else {
      if (st != 200)
        fail_msg("signed chunked PUT: %u %s", st, code);
      struct hs_obj_info info;
      assert_int_equal(hs_store_get(e->srv.store, "examplebucket",
                                    "chunkObject.txt", &info, NULL),
                       HS_OK);
      assert_int_equal(info.size, 66560);
      hs_store_delete(e->srv.store, "examplebucket", "chunkObject.txt");
    }
  }
  /* anonymous requests are refused; so is the token header unsigned */
  expect(e, &(struct call){.method = "GET", .target = "/examplebucket/x"}, 403,
         "AccessDenied");
  assert_true(e->stats.auth_failures >= 2);
}

/* AWS's "GET Bucket (List Objects)" example, signed over host,
 * x-amz-content-sha256 and x-amz-date, with one more header. */
static struct call list_example(const char *name, const char *value)
{
  struct call c = {
      .method = "GET",
      .target = "/?max-keys=2&prefix=J",
      .h = {{"Host", "examplebucket.s3.amazonaws.com"},
            {"x-amz-date", "20130524T000000Z"},
            {"x-amz-content-sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41"
                                     "e4649b934ca495991b7852b855"},
            {"Authorization",
             "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/"
             "us-east-1/s3/aws4_request,SignedHeaders=host;"
             "x-amz-content-sha256;x-amz-date,Signature=34b48302e7b5fa45bde808"
             "4f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"},
            {name, value}}};
  return c;
}

/* Headers that change what a request does must be signed when present
 * (every x-amz-*, Content-MD5, Range), or a replay within the clock-skew
 * window could change them; the credential's region must be the
 * server's. */
static void signed_headers(void **state)
{
  struct env *e = *state;
  struct call c = list_example("Accept", "*/*"); /* need not be signed */
  expect(e, &c, 200, NULL);
  static const char *const must[][2] = {
      {"x-amz-meta-a", "1"},
      {"x-amz-copy-source", "/b/k"},
      {"x-amz-metadata-directive", "REPLACE"},
      {"x-amz-checksum-crc32", "AAAAAA=="},
      {"X-Amz-Rdma-Token", "00"},
      {"Content-MD5", "AAAAAAAAAAAAAAAAAAAAAA=="},
      {"Range", "bytes=0-1"},
  };
  for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
    c = list_example(must[i][0], must[i][1]);
    expect(e, &c, 403, "AccessDenied");
  }
  /* the message names the header */
  c = list_example("x-amz-meta-a", "1");
  struct hs_op *op = run(e, &c);
  status_of(op, NULL);
  assert_non_null(strstr(hs_buf_cstr(&hs_op_response(op)->body),
                         "x-amz-meta-a"));
  hs_op_free(op);
  /* another region's credential */
  e->cfg.auth.region = "eu-west-1";
  c = list_example("Accept", "*/*");
  expect(e, &c, 400, "AuthorizationHeaderMalformed");
  e->cfg.auth.region = "us-east-1";
  expect(e, &c, 200, NULL);
}

/* A client that asks for something the server does not do (encryption,
 * ACLs it cannot honour, object lock, another storage class) gets 501, and nothing
 * is stored, rather than its request carried out without it. */
static void unsupported_features(void **state)
{
  struct env *e = *state;
  expect(e, &(struct call){.method = "PUT", .target = "/bkt"}, 200, NULL);
  static const char *const refused[][2] = {
      {"x-amz-server-side-encryption-customer-algorithm", "AES256"},
      {"x-amz-server-side-encryption-customer-key", "a2V5"},
      {"x-amz-server-side-encryption-customer-key-MD5", "bWQ1"},
      {"x-amz-server-side-encryption", "aws:kms"},
      {"x-amz-acl", "public-read"},
      {"x-amz-grant-read", "id=someone"},
      {"x-amz-acl", "authenticated-read"},
      {"x-amz-object-lock-mode", "COMPLIANCE"},
      {"x-amz-object-lock-retain-until-date", "2100-01-01T00:00:00Z"},
      {"x-amz-object-lock-legal-hold", "ON"},
      {"x-amz-storage-class", "GLACIER"},
      {"x-amz-website-redirect-location", "/x"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    expect(e,
           &(struct call){.method = "PUT",
                          .target = "/bkt/k",
                          .h = {{refused[i][0], refused[i][1]}},
                          .body = "data",
                          .blen = 4},
           501, "NotImplemented");
    expect(e, &(struct call){.method = "GET", .target = "/bkt/k"}, 404,
           "NoSuchKey");
  }
  /* on other operations too: a multipart upload, a bucket */
  expect(e,
         &(struct call){.method = "POST",
                        .target = "/bkt/k?uploads",
                        .h = {{"x-amz-grant-read", "id=someone"}}},
         501, "NotImplemented");
  expect(e,
         &(struct call){.method = "PUT",
                        .target = "/locked",
                        .h = {{"x-amz-bucket-object-lock-enabled", "true"}}},
         501, "NotImplemented");
  /* what the server does anyway is accepted */
  static const char *const accepted[][2] = {
      {"x-amz-acl", "private"},
      {"x-amz-acl", "bucket-owner-full-control"},
      {"x-amz-tagging", "a=b"},
      {"x-amz-storage-class", "STANDARD"},
      {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
  };
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
    expect(e,
           &(struct call){.method = "PUT",
                          .target = "/bkt/k",
                          .h = {{accepted[i][0], accepted[i][1]}},
                          .body = "data",
                          .blen = 4},
           200, NULL);
}

/* A PUT whose announced size does not fit in the memory store's total is
 * refused before its body: 503 SlowDown. */
static void memory_full(void **state)
{
  struct env *e = *state;
  hs_store_close(e->srv.store);
  struct hs_store_config sc = {.max_object_size = e->cfg.max_object_size,
                               .max_buckets = 8,
                               .max_uploads = 4,
                               .max_memory = 1000};
  assert_int_equal(hs_store_open(&sc, &e->srv.store), HS_OK);
  expect(e, &(struct call){.method = "PUT", .target = "/bkt"}, 200, NULL);
  static char body[2000];
  struct hs_op *op = run(e, &(struct call){.method = "PUT",
                                           .target = "/bkt/k",
                                           .body = body,
                                           .blen = 2000});
  const char *code;
  assert_int_equal(status_of(op, &code), 503);
  assert_string_equal(code, "SlowDown");
  assert_int_equal(hs_op_body_bytes(op), 0); /* before the body */
  hs_op_free(op);
  expect(e,
         &(struct call){.method = "PUT",
                        .target = "/bkt/k",
                        .body = body,
                        .blen = 900},
         200, NULL);
}

static void rdma_tokens(void **state)
{
  struct env *e = *state;
  const char *tok = "01ab12000000000000000000000000ffffc0a8012aefbeadde0010000"
                    "0007f00000010000000000000010000";
  expect(e, &(struct call){.method = "PUT", .target = "/bkt"}, 200, NULL);
  expect(e,
         &(struct call){.method = "PUT",
                        .target = "/bkt/obj",
                        .h = {{0}},
                        .body = "data",
                        .blen = 4},
         200, NULL);
  struct hs_op *op = run(e, &(struct call){.method = "GET",
                                           .target = "/bkt/obj",
                                           .h = {{"x-amz-rdma-token", "abc"}}});
  struct hs_response *r = hs_op_response(op);
  assert_int_equal(r->status, 400);
  assert_null(resp_header(r, "x-amz-rdma-reply"));
  hs_op_free(op);
  op = run(e, &(struct call){.method = "GET",
                             .target = "/bkt/obj",
                             .h = {{"X-Amz-Rdma-Token", tok}}});
  r = hs_op_response(op);
  assert_int_equal(r->status, 501);
  assert_string_equal(resp_header(r, "x-amz-rdma-reply"), "501");
  assert_string_equal(hs_op_path(op), "rdma");
  hs_op_free(op);
  /* NVIDIA cuObject's DC descriptor, with or without ":addr:size": 501 so
   * that its client falls back to HTTP; a hipObject token with a bad field
   * (an unknown transport) stays 400 */
  const char *cuobj =
      "00007f7c2a000000000000100000000002c9d8a7000000000000fe80000000000000"
      "0a1b2c3d4e5f6";
  char cuobj_sfx[160];
  snprintf(cuobj_sfx, sizeof cuobj_sfx, "%s:00007f7c2a000000:0000000000001000",
           cuobj);
  assert_int_equal(strlen(cuobj), 81);
  const char *foreign[] = {cuobj, cuobj_sfx};
  for (int i = 0; i < 2; i++) {
    op = run(e, &(struct call){.method = i ? "PUT" : "GET",
                               .target = "/bkt/obj",
                               .h = {{"x-amz-rdma-token", foreign[i]}}});
    r = hs_op_response(op);
    assert_int_equal(r->status, 501);
    assert_string_equal(resp_header(r, "x-amz-rdma-reply"), "501");
    hs_op_free(op);
  }
  char badfield[100];
  snprintf(badfield, sizeof badfield, "%s", tok);
  badfield[0] = 'f'; /* an unknown transport byte */
  badfield[1] = 'f';
  op = run(e, &(struct call){.method = "GET",
                             .target = "/bkt/obj",
                             .h = {{"x-amz-rdma-token", badfield}}});
  r = hs_op_response(op);
  assert_int_equal(r->status, 400);
  assert_null(resp_header(r, "x-amz-rdma-reply"));
  hs_op_free(op);
  e->cfg.decline_rdma = true;
  op = run(e, &(struct call){.method = "PUT",
                             .target = "/bkt/obj",
                             .h = {{"x-amz-rdma-token", tok}}});
  r = hs_op_response(op);
  assert_int_equal(r->status, 501);
  assert_string_equal(resp_header(r, "x-amz-rdma-reply"), "501");
  hs_op_free(op);
  e->cfg.decline_rdma = false;
  /* a token on an operation without a payload is not an RDMA request */
  expect(e,
         &(struct call){.method = "HEAD",
                        .target = "/bkt/obj",
                        .h = {{"x-amz-rdma-token", tok}}},
         200, NULL);
  assert_int_equal(e->stats.rdma_requests, 6);
  assert_int_equal(e->stats.rdma_bad_tokens, 2);
  assert_int_equal(e->stats.rdma_declined, 4);
  /* the object was not touched */
  op = run(e, &(struct call){.method = "GET", .target = "/bkt/obj"});
  char *b = read_all(hs_op_response(op));
  assert_string_equal(b, "data");
  free(b);
  hs_op_free(op);
}

/* Content-Encoding is kept without aws-chunked (how the body travelled);
 * a response-* override that would put a control character in a header is
 * refused. */
static void kept_headers(void **state)
{
  struct env *e = *state;
  expect(e, &(struct call){.method = "PUT", .target = "/bkt"}, 200, NULL);
  const char *enc[][2] = {{"aws-chunked", NULL},
                          {"aws-chunked, gzip", "gzip"},
                          {"gzip,br", "gzip,br"}};
  for (int i = 0; i < 3; i++) {
    expect(e,
           &(struct call){.method = "PUT",
                          .target = "/bkt/enc",
                          .h = {{"Content-Encoding", enc[i][0]}},
                          .body = "x",
                          .blen = 1},
           200, NULL);
    struct hs_op *op =
        run(e, &(struct call){.method = "HEAD", .target = "/bkt/enc"});
    const char *got = resp_header(hs_op_response(op), "Content-Encoding");
    if (enc[i][1])
      assert_string_equal(got, enc[i][1]);
    else
      assert_null(got);
    hs_op_free(op);
  }
  expect(e,
         &(struct call){.method = "GET",
                        .target = "/bkt/enc?response-content-type=a%0D%0Ab"},
         400, "InvalidArgument");
  struct hs_op *op = run(
      e, &(struct call){.method = "GET",
                        .target = "/bkt/enc?response-cache-control=no-store"});
  assert_string_equal(resp_header(hs_op_response(op), "Cache-Control"),
                      "no-store");
  hs_op_free(op);
}

static void list_xml(void **state)
{
  struct env *e = *state;
  expect(e, &(struct call){.method = "PUT", .target = "/bkt"}, 200, NULL);
  const char *keys[] = {"a%2Bb", "a%20c", "d%2Fe%2Ff", "d%2Fg", "%C3%A9"};
  for (int i = 0; i < 5; i++) {
    char t[64];
    snprintf(t, sizeof t, "/bkt/%s", keys[i]);
    expect(
        e,
        &(struct call){
            .method = "PUT", .target = t, .h = {{0}}, .body = "x", .blen = 1},
        200, NULL);
  }
  struct hs_op *op = run(
      e,
      &(struct call){
          .method = "GET",
          .target =
              "/bkt?list-type=2&delimiter=%2F&encoding-type=url&max-keys=3"});
  const char *b = hs_buf_cstr(&hs_op_response(op)->body);
  assert_non_null(strstr(b, "<Key>a%20c</Key>"));
  assert_non_null(strstr(b, "<Key>a%2Bb</Key>"));
  assert_non_null(strstr(b, "<CommonPrefixes><Prefix>d/</Prefix>"));
  assert_non_null(strstr(b, "<KeyCount>3</KeyCount>"));
  assert_non_null(strstr(b, "<IsTruncated>true</IsTruncated>"));
  assert_non_null(
      strstr(b, "<NextContinuationToken>642f</NextContinuationToken>"));
  hs_op_free(op);
  op =
      run(e, &(struct call){
                 .method = "GET",
                 .target =
                     "/bkt?list-type=2&delimiter=%2F&continuation-token=642f"});
  b = hs_buf_cstr(&hs_op_response(op)->body);
  assert_non_null(strstr(b, "<Key>\xc3\xa9</Key>"));
  assert_null(strstr(b, "d/"));
  assert_non_null(strstr(b, "<KeyCount>1</KeyCount>"));
  hs_op_free(op);
  /* an empty continuation token lists from the start, and is echoed (S3
   * and RGW do); an empty delimiter is no delimiter, and not in the
   * result */
  op = run(e, &(struct call){
                  .method = "GET",
                  .target = "/bkt?list-type=2&continuation-token=&delimiter="});
  assert_int_equal(hs_op_response(op)->status, 200);
  b = hs_buf_cstr(&hs_op_response(op)->body);
  assert_non_null(strstr(b, "<KeyCount>5</KeyCount>"));
  assert_null(strstr(b, "Delimiter"));
  assert_non_null(strstr(b, "<ContinuationToken></ContinuationToken>"));
  assert_null(strstr(b, "NextContinuationToken"));
  hs_op_free(op);
  /* v1 does not encode Prefix; v2 and versions do */
  const char *enc[][2] = {
      {"/bkt?prefix=a%20&encoding-type=url", "<Prefix>a </Prefix>"},
      {"/bkt?list-type=2&prefix=a%20&encoding-type=url",
       "<Prefix>a%20</Prefix>"},
      {"/bkt?versions&prefix=a%20&encoding-type=url",
       "<Prefix>a%20</Prefix>"}};
  for (int i = 0; i < 3; i++) {
    op = run(e, &(struct call){.method = "GET", .target = enc[i][0]});
    b = hs_buf_cstr(&hs_op_response(op)->body);
    assert_non_null(strstr(b, enc[i][1]));
    assert_non_null(strstr(b, "<Key>a%20c</Key>"));
    hs_op_free(op);
  }
  /* ListObjectVersions: every object is its one version, null */
  op = run(e, &(struct call){.method = "GET",
                             .target = "/bkt?versions&max-keys=2"});
  b = hs_buf_cstr(&hs_op_response(op)->body);
  assert_non_null(strstr(b, "<ListVersionsResult"));
  assert_non_null(strstr(b, "<Version><Key>a c</Key><VersionId>null"
                            "</VersionId><IsLatest>true</IsLatest>"));
  assert_non_null(strstr(b, "<NextKeyMarker>a+b</NextKeyMarker>"));
  assert_non_null(strstr(b, "<NextVersionIdMarker>null"));
  hs_op_free(op);
  op = run(e, &(struct call){.method = "GET",
                             .target = "/bkt?versions&key-marker=a%2Bb"});
  b = hs_buf_cstr(&hs_op_response(op)->body);
  assert_null(strstr(b, "<Key>a+b</Key>"));
  assert_non_null(strstr(b, "<Key>d/e/f</Key>"));
  assert_non_null(strstr(b, "<IsTruncated>false</IsTruncated>"));
  hs_op_free(op);
  expect(
      e,
      &(struct call){.method = "GET", .target = "/bkt?list-type=2&max-keys=x"},
      400, "InvalidArgument");
  expect(e,
         &(struct call){.method = "GET",
                        .target = "/bkt?list-type=2&encoding-type=base64"},
         400, "InvalidArgument");
  expect(e,
         &(struct call){.method = "GET",
                        .target = "/bkt?list-type=2&continuation-token=zz"},
         400, "InvalidArgument");
}

static struct hs_obj_info info0;

static void lister_rules(void **state)
{
  const char *keys[] = {"a", "b/1", "b/2", "c", "d/x/1", "d/y", "e"};
  /* pages of 2 with a delimiter: a b/ | c d/ | e */
  const char *want[][2] = {{"a", "b/"}, {"c", "d/"}, {"e", NULL}};
  char after[32] = "";
  for (int page = 0; page < 3; page++) {
    struct hs_lister l;
    hs_lister_init(&l, "", "/", after, 2);
    for (size_t i = 0; i < 7; i++)
      if (strcmp(keys[i], after) > 0 && !hs_lister_add(&l, keys[i], &info0))
        break;
    assert_string_equal(l.items[0].key, want[page][0]);
    if (want[page][1])
      assert_string_equal(l.items[1].key, want[page][1]);
    assert_int_equal(l.truncated, page < 2);
    snprintf(after, sizeof after, "%s", hs_lister_last(&l));
    hs_lister_free(&l);
  }
  /* a prefix: only its keys, and the scan stops past it */
  struct hs_lister l;
  hs_lister_init(&l, "d/", "/", "", 10);
  const char *from;
  bool incl;
  hs_lister_start(&l, &from, &incl);
  assert_string_equal(from, "d/");
  assert_true(incl);
  assert_true(hs_lister_add(&l, "d/x/1", &info0));
  assert_true(hs_lister_add(&l, "d/x/2", &info0));
  assert_true(hs_lister_add(&l, "d/y", &info0));
  assert_false(hs_lister_add(&l, "e", &info0));
  assert_int_equal(l.n, 2);
  assert_string_equal(l.items[0].key, "d/x/");
  assert_true(l.items[0].is_prefix);
  assert_string_equal(l.items[1].key, "d/y");
  assert_false(l.truncated);
  hs_lister_free(&l);
  /* max 0 */
  hs_lister_init(&l, "", NULL, "", 0);
  assert_false(hs_lister_add(&l, "a", &info0));
  assert_false(l.truncated);
  hs_lister_free(&l);
  /* a multi-character delimiter */
  hs_lister_init(&l, "", "::", "", 10);
  hs_lister_add(&l, "a::b::c", &info0);
  hs_lister_add(&l, "a::d", &info0);
  hs_lister_add(&l, "a:e", &info0);
  assert_int_equal(l.n, 2);
  assert_string_equal(l.items[0].key, "a::");
  assert_string_equal(l.items[1].key, "a:e");
  hs_lister_free(&l);
}

static void admin(void **state)
{
  struct env *e = *state;
  struct hs_op *op =
      run(e, &(struct call){.method = "GET", .target = "/_hipobj/stats"});
  struct hs_response *r = hs_op_response(op);
  assert_int_equal(r->status, 200);
  assert_string_equal(resp_header(r, "Content-Type"), "application/json");
  const char *b = hs_buf_cstr(&r->body);
  assert_non_null(strstr(b, "\"rdma\":{\"requests\":"));
  assert_non_null(strstr(b, "\"http\":{\"bytes_in\":"));
  assert_non_null(strstr(b, "\"store\":{\"buckets\":0"));
  assert_non_null(strstr(b, "\"cpu\":{\"user_s\":"));
  assert_non_null(strstr(b, ",\"s_per_gb\":"));
  hs_op_free(op);
  expect(e, &(struct call){.method = "GET", .target = "/_hipobj/health"}, 200,
         NULL);
  expect(e, &(struct call){.method = "DELETE", .target = "/_hipobj/stats"}, 405,
         "MethodNotAllowed");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(routing),
      cmocka_unit_test_setup_teardown(objects_and_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(bodies, setup, teardown),
      cmocka_unit_test_setup_teardown(streaming_signed, setup_auth, teardown),
      cmocka_unit_test_setup_teardown(signed_headers, setup_auth, teardown),
      cmocka_unit_test_setup_teardown(unsupported_features, setup, teardown),
      cmocka_unit_test_setup_teardown(memory_full, setup, teardown),
      cmocka_unit_test_setup_teardown(rdma_tokens, setup, teardown),
      cmocka_unit_test_setup_teardown(kept_headers, setup, teardown),
      cmocka_unit_test_setup_teardown(list_xml, setup, teardown),
      cmocka_unit_test(lister_rules),
      cmocka_unit_test_setup_teardown(admin, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
