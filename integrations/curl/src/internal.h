/* SPDX-License-Identifier: MIT */
/* Internals of libhipobj_s3, shared between its files (and its unit tests).
 * The files are layers, lowest first: each calls only files above it in
 * this list (AGENTS.md, "Layers"), and the sections below come in the same
 * order.
 *
 *   config.c   the configuration, resolved against the environment
 *   url.c      s3:// URLs, path-style request URLs, URI encoding
 *   s3err.c    results: S3 XML bodies, error codes, messages a person can
 *              act on
 *   client.c   the client: hipObjInit, curl handles, counters
 *   request.c  one HTTP exchange on a curl easy handle
 *   call.c     one request as hipObjOps_t (the RDMA path)
 *   parts.c    a transfer in parts: windows, workers, RDMA or HTTP per part
 *   multipart.c  multipart upload: create, parts, ETags, complete, abort
 *   object.c   HEAD, GET, ranged GET, PUT: the public object operations
 */
#ifndef HO_S3_INTERNAL_H
#define HO_S3_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "common/thread_safety.h"
#include "hipobj_s3.h"

#define HO_S3_ENDPOINT_MAX 1024
#define HO_S3_REGION_MAX 64
#define HO_S3_KEY_ID_MAX 256
#define HO_S3_SECRET_MAX 256
#define HO_S3_SESSION_MAX 4096
#define HO_S3_NIC_MAX 256
#define HO_S3_URL_MAX 4096
#define HO_S3_OBJKEY_MAX 1024  /* S3's longest key, in bytes */
#define HO_S3_BUCKET_MAX 255
#define HO_S3_ERRBODY_MAX 8192 /* error bodies kept for the message */
/* 503/500 retries (AWS_MAX_ATTEMPTS): full-jitter backoff, a random wait
 * below min(CAP, BASE * 2^retry). */
#define HO_S3_MAX_ATTEMPTS_DEFAULT 4u
#define HO_S3_MAX_ATTEMPTS_MAX 20u
#define HO_S3_BACKOFF_BASE_MS 100u
#define HO_S3_BACKOFF_CAP_MS 2000u
#define HO_S3_XMLBODY_MAX ((size_t)4 << 20) /* multipart XML answers */
#define HO_S3_BOUNCE_MAX ((size_t)8 << 20)  /* device-memory bounce buffer */
#define HO_S3_MAX_PARTS 10000u
#define HO_S3_IDLE_HANDLES 32

/* ---- config.c ---------------------------------------------------------- */

struct ho_s3_settings {
  char endpoint[HO_S3_ENDPOINT_MAX]; /* no trailing '/' */
  char region[HO_S3_REGION_MAX];
  char access_key[HO_S3_KEY_ID_MAX];
  char secret_key[HO_S3_SECRET_MAX];
  char session_token[HO_S3_SESSION_MAX];
  bool sign;
  uint64_t part_size;
  unsigned concurrency;
  uint32_t flags;
  int gpu_device;
  char nic_hint[HO_S3_NIC_MAX];
  bool has_nic_hint;
  unsigned max_attempts; /* AWS_MAX_ATTEMPTS: a request answered 503 or 500
                            is sent again, this many times in all */
  bool has_dev_ops;
  hipObjS3DeviceOps_t dev;
  hipObjS3Progress_t progress;
  void *progress_ctx;
};

typedef const char *(*ho_s3_getenv_fn)(const char *name, void *ctx);

/* Defaults, the environment (through get, unless HIPOBJ_S3_NO_ENV), then
 * cfg (may be NULL). On failure `err` says why, and *out is unspecified. */
hipObjS3Status_t ho_s3_settings_resolve(const hipObjS3Config_t *cfg,
                                        ho_s3_getenv_fn get, void *get_ctx,
                                        struct ho_s3_settings *out, char *err,
                                        size_t err_len);

/* ---- url.c -------------------------------------------------------------- */

/* RFC 3986 percent-encoding of everything but unreserved characters (and
 * '/' when keep_slash), as SigV4's canonical URI wants it. */
bool ho_s3_uri_encode(const char *in, size_t len, bool keep_slash, char *out,
                      size_t cap);
/* ENDPOINT/BUCKET[/KEY][?QUERY]. The query must already be canonical
 * (sorted, encoded, "name=" for an empty value). */
bool ho_s3_object_url(const struct ho_s3_settings *s, const char *bucket,
                      const char *key, const char *query, char *out,
                      size_t cap);
bool ho_s3_bucket_ok(const char *bucket);
bool ho_s3_key_ok(const char *key);

/* ---- s3err.c ------------------------------------------------------------ */

/* The text of the first <tag>...</tag> in an XML body, entities decoded,
 * bounded by cap (NUL-terminated). false when absent or too long. */
bool ho_s3_xml_text(const char *body, size_t len, const char *tag, char *out,
                    size_t cap);
/* The raw text of the next <tag>...</tag> from *pos (not decoded), and
 * *pos past it. */
bool ho_s3_xml_span(const char *body, size_t len, size_t *pos,
                    const char *tag, const char **text, size_t *text_len);
/* Like ho_s3_xml_text, starting at *pos and moving it past the element:
 * iterates repeated elements. */
bool ho_s3_xml_next(const char *body, size_t len, size_t *pos,
                    const char *tag, char *out, size_t cap);

/* What an S3 failure was about, for the message. */
struct ho_s3_target {
  const char *op; /* "GET", "PUT", "HEAD", ... */
  const char *bucket;
  const char *key;
};

/* The status for an HTTP error (code from the body, or from the status when
 * the body has none: HEAD) and a message that says what to do. Writes
 * res->status, s3Code, message and httpStatus. */
hipObjS3Status_t ho_s3_http_failure(const struct ho_s3_settings *s,
                                    const struct ho_s3_target *t, long status,
                                    const char *body, size_t body_len,
                                    hipObjS3Result_t *res);
/* A transport failure of curl, as ConnectFailed or HttpError. */
hipObjS3Status_t ho_s3_curl_failure(const struct ho_s3_settings *s,
                                    CURLcode cc, const char *detail,
                                    hipObjS3Result_t *res);
/* Starts res: zeroed, status Ok. */
void ho_s3_result_clear(hipObjS3Result_t *res);
/* Sets res->status and a formatted message; returns the status. */
hipObjS3Status_t ho_s3_fail(hipObjS3Result_t *res, hipObjS3Status_t st,
                            const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- client.c ----------------------------------------------------------- */

struct hipObjS3Client {
  struct ho_s3_settings s;
  char sigv4[HO_S3_REGION_MAX + 16]; /* "aws:amz:REGION:s3" */
  bool rdma;       /* hipObject is usable */
  bool owns_init;  /* this client called hipObjInit and will shut it down */
  hipObjOpError_t init_error;
  char no_rdma_why[256];

  ho_mutex handles_mu;
  CURL *idle[HO_S3_IDLE_HANDLES] HO_GUARDED_BY(handles_mu);
  unsigned n_idle HO_GUARDED_BY(handles_mu);

  atomic_uint_fast64_t rdma_transfers, rdma_bytes;
  atomic_uint_fast64_t http_transfers, http_bytes;
  atomic_uint_fast64_t fallbacks_declined, fallbacks_no_rdma;
  atomic_uint_fast64_t requests;
  atomic_uint_fast64_t s3_retries; /* requests sent again after 503/500 */
};

/* A curl handle with its connection cache, reset; NULL when out of memory. */
CURL *ho_s3_handle_get(hipObjS3Client_t *c);
void ho_s3_handle_put(hipObjS3Client_t *c, CURL *h);
void ho_s3_count(atomic_uint_fast64_t *counter, uint64_t n);

/* ---- request.c ---------------------------------------------------------- */

enum ho_s3_sink {
  HO_S3_SINK_NONE,   /* a body on a 2xx answer is a protocol error */
  HO_S3_SINK_HOST,   /* into host memory, at most dst_cap bytes */
  HO_S3_SINK_DEVICE, /* into device memory through the bounce buffer */
  HO_S3_SINK_XML     /* into a growing buffer, at most HO_S3_XMLBODY_MAX */
};

enum ho_s3_source {
  HO_S3_SRC_NONE,   /* no body: Content-Length: 0 */
  HO_S3_SRC_HOST,   /* from host memory */
  HO_S3_SRC_DEVICE, /* from device memory through the bounce buffer */
  HO_S3_SRC_XML     /* a small body in memory (CompleteMultipartUpload) */
};

/* A host bounce buffer for device memory (pinned when the application can
 * allocate it so). */
struct ho_s3_bounce {
  char *p;
  size_t cap;
  size_t fill; /* GET: bytes waiting to be copied; PUT: bytes available */
  size_t pos;  /* PUT: bytes of the bounce already sent */
  bool pinned;
};

/* Shared by the parts of one transfer: bytes done, for progress. */
struct ho_s3_progress {
  hipObjS3Progress_t fn;
  void *ctx;
  uint64_t total;
  atomic_uint_fast64_t done;
  atomic_int cancelled;
};

struct ho_s3_req {
  hipObjS3Client_t *client;
  const char *method;        /* GET, PUT, HEAD, POST, DELETE */
  struct ho_s3_target target;
  const char *query;         /* canonical, or NULL */
  const char *token;         /* x-amz-rdma-token, or NULL */
  bool has_range;
  uint64_t range_first, range_len;

  enum ho_s3_source src;
  const char *src_ptr;
  uint64_t src_len, src_pos;

  enum ho_s3_sink sink;
  char *dst;
  uint64_t dst_cap, dst_len;
  struct ho_s3_bounce *bounce; /* SINK_DEVICE, SRC_DEVICE */
  struct ho_s3_progress *progress;
  uint64_t progress_reported;

  /* The response. */
  long status;
  bool have_reply;
  char reply[HIPOBJ_REPLY_BUF_LEN];
  size_t reply_len;
  bool reply_too_long;
  bool have_xfer;
  uint64_t xfer_bytes;
  bool xfer_bad;
  bool have_length;
  uint64_t content_length;
  bool have_total;
  uint64_t total_size; /* from Content-Range */
  char etag[HIPOBJ_S3_ETAG_LEN];
  char *xml;           /* SINK_XML, and error bodies */
  size_t xml_len, xml_cap;
  bool body_unexpected; /* a 2xx body where none may be */
  bool body_overflow;   /* more bytes than the destination holds */
  bool copy_failed;
  char curl_error[CURL_ERROR_SIZE];
};

/* Sets up r for one request; the caller fills the rest. */
void ho_s3_req_init(struct ho_s3_req *r, hipObjS3Client_t *c,
                    const char *method, const char *bucket, const char *key);
/* Sends the request and reads the whole response. Returns CURLE_OK when an
 * HTTP response arrived (whatever its status); r->status has it. */
CURLcode ho_s3_req_perform(struct ho_s3_req *r);
/* The request's outcome as a status (2xx and nothing amiss: Ok), with the
 * message in res. */
hipObjS3Status_t ho_s3_req_outcome(struct ho_s3_req *r, CURLcode cc,
                                   hipObjS3Result_t *res);
void ho_s3_req_cleanup(struct ho_s3_req *r);

/* ---- call.c ------------------------------------------------------------- */

struct hipObjS3Call {
  hipObjS3Client_t *client;
  hipObjS3CallSpec_t spec;
  char bucket[HO_S3_BUCKET_MAX + 1];
  char key[HO_S3_OBJKEY_MAX + 1];
  char upload_id[1024];
  char query[1200];
  uint64_t expect;           /* bytes the server must announce */
  int sent;                  /* sendRequest ran */
  struct ho_s3_req req;
  CURLcode cc;
  hipObjS3Status_t failure;  /* what a failing callback found */
  hipObjS3Result_t res;      /* the failure's message */
};

/* false when the upload id does not fit a URL. */
bool ho_s3_call_setup(struct hipObjS3Call *call, hipObjS3Client_t *c,
                      const hipObjS3CallSpec_t *spec);
void ho_s3_call_teardown(struct hipObjS3Call *call);
/* Whether the server answered 501: the reply said so. */
bool ho_s3_call_declined(const struct hipObjS3Call *call);

/* ---- parts.c ------------------------------------------------------------ */

/* One part of a transfer: bytes [off, off+len) of the buffer, object bytes
 * [obj_off, ...), or UploadPart number `number`. */
struct ho_s3_part {
  uint64_t off, len;
  uint64_t obj_off;
  unsigned number;         /* PUT: 1-based; 0 for PutObject */
  char etag[HIPOBJ_S3_ETAG_LEN];
  bool via_rdma;
};

struct ho_s3_xfer {
  hipObjS3Client_t *client;
  int op;                  /* HIPOBJ_RDMA_OP_GET or _PUT */
  const char *bucket, *key;
  char *buf;               /* host or device address; never dereferenced
                              for device memory */
  uint64_t size;
  hipObjS3MemKind_t mem;
  bool ranged;             /* GET: send Range even for one part */
  const char *upload_id;   /* PUT in parts */
  struct ho_s3_part *parts;
  unsigned n_parts;
  uint64_t window;         /* registration window */

  struct ho_s3_progress progress;
  atomic_uint next;
  atomic_int stop;
  atomic_int declined;     /* a 501 was seen: the rest go by HTTP */
  atomic_uint parts_rdma, parts_http, parts_declined;
  atomic_uint_fast64_t bytes;

  ho_mutex mu;
  bool failed HO_GUARDED_BY(mu);
  hipObjS3Result_t first_error HO_GUARDED_BY(mu);
};

/* Splits [0, size) into parts of the client's part size. */
hipObjS3Status_t ho_s3_xfer_plan(struct ho_s3_xfer *x, uint64_t obj_off,
                                 bool numbered, hipObjS3Result_t *res);
/* Runs every part (RDMA or HTTP), on up to `concurrency` threads, and
 * writes the outcome to res. */
hipObjS3Status_t ho_s3_xfer_run(struct ho_s3_xfer *x, hipObjS3Result_t *res);
void ho_s3_xfer_free(struct ho_s3_xfer *x);

/* ---- multipart.c -------------------------------------------------------- */

/* PUT x (already set up, not planned) as a multipart upload. */
hipObjS3Status_t ho_s3_multipart_put(struct ho_s3_xfer *x,
                                     hipObjS3Result_t *res);

#endif
