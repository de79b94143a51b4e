/* SPDX-License-Identifier: MIT */
/* Shared by the s3_*.c files: the op's state, the routing table, the error
 * responses. Not used by http.c. */
#ifndef HS_S3_INTERNAL_H
#define HS_S3_INTERNAL_H

#include "auth/auth.h"
#include "auth/checksum.h"
#include "hash.h"
#include "s3.h"
#include "s3_ops.h"
#include "timefmt.h"
#include "uri.h"

enum hs_body_mode {
  HS_BODY_NONE,    /* not expected: up to a small limit, discarded */
  HS_BODY_BUFFER,  /* an XML document, kept in op->body */
  HS_BODY_WRITER,  /* object or part bytes, into op->writer */
};

struct hs_op {
  struct hs_server *srv;
  struct hs_request req;
  enum hs_method method;
  struct hs_span path;
  struct hs_span query_raw;
  struct hs_query query;
  char bucket[HS_BUCKET_MAX + 1];
  char key[HS_KEY_MAX + 1];
  size_t key_len;
  enum hs_s3_kind kind;
  char request_id[17];

  struct hs_auth auth;

  enum hs_body_mode body_mode;
  struct hs_buf body;       /* HS_BODY_BUFFER */
  struct hs_writer *writer; /* HS_BODY_WRITER */
  uint64_t body_bytes;      /* payload bytes received (decoded) */
  uint64_t body_limit;
  bool has_content_md5;
  uint8_t content_md5[HS_MD5_LEN];
  enum hs_err body_err; /* the first error while receiving */
  struct hs_cksum cksum; /* x-amz-checksum-*, PutObject and UploadPart */
  char cksum_b64[48];    /* its value, once verified */
  unsigned part_number;  /* UploadPart */
  const char *upload_id; /* UploadPart, Complete, Abort, ListParts */

  bool rdma;             /* the request carries a token (GET, PUT, part) */

  struct hs_response resp;
  bool done; /* resp is final */
};

/* Forgets any response set so far: status 200, only x-amz-request-id. */
void hs_op_resp_reset(struct hs_op *op);

/* Sets resp to the S3 error for err, with the XML body (none for HEAD). */
void hs_op_error(struct hs_op *op, enum hs_err err);
void hs_op_error_msg(struct hs_op *op, enum hs_err err, const char *message);
/* Status and S3 code of an error. */

/* Starts a 200 response with an XML body: the declaration is written. */
void hs_op_xml_begin(struct hs_op *op, unsigned status);

/* The handlers. begin: headers known, decide the body mode or respond.
 * end: the body is complete (op->body_err is HS_OK). */
enum hs_step hs_s3_bucket_begin(struct hs_op *op);
void hs_s3_bucket_end(struct hs_op *op);
void hs_s3_list_objects(struct hs_op *op, bool v2);
void hs_s3_list_versions(struct hs_op *op);
void hs_s3_list_buckets(struct hs_op *op);
/* The one writer choice of PutObject (the store's put, with the request's
 * attributes) and UploadPart (the upload's part, with its arguments), for
 * `size` bytes (0 if unknown), over HTTP and RDMA: opens op->writer (MD5
 * required when Content-MD5 is given), or sets the error response (413
 * past --max-object-size) and returns false. */
bool hs_op_open_writer(struct hs_op *op, uint64_t size);
/* A PUT-like request whose body streams into op->writer: open the writer
 * for the announced size and set up the body, and at its end commit the
 * writer and answer with the ETag. Shared by PutObject and UploadPart. */
enum hs_step hs_op_body_to_writer(struct hs_op *op);
void hs_op_commit_writer(struct hs_op *op);

/* A GET or HEAD of op's object, decided the same way over HTTP and RDMA:
 * the object, its conditions (412, 304 with ETag and Last-Modified) and
 * its range (416 with Content-Range: bytes * /SIZE). */
struct hs_get {
  struct hs_obj_info info;
  struct hs_reader *reader; /* when asked for; the caller owns it */
  uint64_t first, count;    /* the bytes to serve */
  bool partial;             /* a range (or a part of several): 206 */
  unsigned parts_count;     /* ?partNumber= of a multipart object: its
                               part count, x-amz-mp-parts-count */
  char part_checksum[HS_PART_CKSUM_MAX]; /* and the part's checksum line */
};
/* True with g filled; false with the error response set (and no reader). */
bool hs_op_get_prepare(struct hs_op *op, bool reader, struct hs_get *g);
/* A successful GET's status (200 or 206) and headers: the object's, and
 * Content-Range for a range. */
void hs_op_get_headers(struct hs_op *op, const struct hs_get *g);
/* The source of a CopyObject or UploadPartCopy: x-amz-copy-source, opened
 * for reading, its x-amz-copy-source-if-* conditions held (412 otherwise).
 * On success the caller closes s->reader. */
struct hs_copy_src {
  char bucket[HS_BUCKET_MAX + 1];
  char key[HS_KEY_MAX + 1];
  struct hs_obj_info info;
  struct hs_reader *reader;
};
enum hs_err hs_op_copy_open(struct hs_op *op, struct hs_copy_src *s);
/* The conditions a write (PutObject, CopyObject, CompleteMultipartUpload:
 * If-Match, If-None-Match) or a DeleteObject (those and
 * x-amz-if-match-size, x-amz-if-match-last-modified-time) puts on the
 * object it replaces; *any says whether there is one.
 * Errors: HS_ERR_INVALID_ARGUMENT (a malformed size or time). */
enum hs_err hs_op_write_cond(const struct hs_op *op, struct hs_cond *c,
                             bool *any);
/* count bytes of r from first on into w. */
enum hs_err hs_copy_bytes(struct hs_reader *r, struct hs_writer *w,
                          uint64_t first, uint64_t count);
enum hs_step hs_s3_object_begin(struct hs_op *op);
void hs_s3_object_end(struct hs_op *op);
enum hs_step hs_s3_multipart_begin(struct hs_op *op);
void hs_s3_multipart_end(struct hs_op *op);
void hs_s3_admin(struct hs_op *op);

/* RDMA requests (s3_rdma.c): whether the request carries a token; if it
 * does, the answer (400, 501, or the engine's) is set in op->resp. */
bool hs_s3_rdma(struct hs_op *op);

/* partNumber (1..10000) into op->part_number. HS_ERR_INVALID_ARGUMENT. */
enum hs_err hs_op_part_number(struct hs_op *op);
/* UploadPart's partNumber (1..10000) and uploadId, into the op.
 * Errors: HS_ERR_INVALID_ARGUMENT, HS_ERR_NO_UPLOAD. */
enum hs_err hs_op_part_args(struct hs_op *op);

/* Reads the attributes a PUT gives (Content-Type, x-amz-meta-*).
 * Errors: HS_ERR_INVALID_ARGUMENT (too long). */
enum hs_err hs_op_attrs(const struct hs_op *op, struct hs_obj_attrs *out);
/* Adds ETag, Last-Modified, Content-Type, the kept headers (Cache-Control,
 * Content-Disposition, Content-Encoding, Content-Language, Expires) and
 * x-amz-meta-*; a GetObject's or HeadObject's response-* query parameters
 * replace what is stored. */
void hs_op_object_headers(struct hs_op *op, const struct hs_obj_info *info);
/* HS_ERR_INVALID_ARGUMENT if a response-* override holds a control
 * character (it would end up in a header). */
enum hs_err hs_op_check_overrides(const struct hs_op *op);
/* Adds an object's (or part's) checksum, and its type (NULL: none), to
 * its attributes; false if it does not fit. */
bool hs_attrs_add_checksum(struct hs_obj_attrs *a, enum hs_cksum_alg alg,
                           const char *b64, const char *type);
/* With x-amz-checksum-mode: ENABLED, the checksum headers kept in a. */
void hs_op_checksum_headers(struct hs_op *op, const struct hs_obj_attrs *a);
/* "name:value\n" lines (hs_obj_attrs.headers): appends one, if it fits in
 * max bytes with the NUL; finds one (its value and length) or NULL. */
bool hs_attr_line_add(char *lines, size_t max, const char *name,
                      const char *value, size_t vl);
const char *hs_attr_line(const char *lines, const char *name, size_t *vl);

#endif
