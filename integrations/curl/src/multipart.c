/* SPDX-License-Identifier: MIT */
/* Multipart upload: create, the parts (RDMA or HTTP, in parallel), the
 * parts' ETags, complete; abort on any failure so no upload is left behind.
 *
 * A part moved by RDMA has no ETag in its response: the server answers
 * before the bytes move (docs/protocol.md), so it cannot know their MD5.
 * Those ETags come from ListParts once every part is in. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define UPLOAD_ID_MAX 1024

struct upload {
  struct ho_s3_xfer *x;
  char id[UPLOAD_ID_MAX];
  char id_enc[UPLOAD_ID_MAX * 3 + 1];
};

/* A request whose answer is XML (or nothing), with an optional XML body. */
static hipObjS3Status_t xml_request(struct ho_s3_req *r, const char *method,
                                    const struct upload *u, const char *query,
                                    const char *body, size_t body_len,
                                    hipObjS3Result_t *res)
{
  ho_s3_req_init(r, u->x->client, method, u->x->bucket, u->x->key);
  r->query = query;
  r->sink = HO_S3_SINK_XML;
  if (body) {
    r->src = HO_S3_SRC_XML;
    r->src_ptr = body;
    r->src_len = body_len;
  }
  CURLcode cc = ho_s3_req_perform(r);
  hipObjS3Status_t st = ho_s3_req_outcome(r, cc, res);
  if (st == hipObjS3ProtocolError && r->body_overflow)
    st = ho_s3_fail(res, st, "the server's XML answer is too long");
  return st;
}

static hipObjS3Status_t create_upload(struct upload *u, hipObjS3Result_t *res)
{
  struct ho_s3_req r;
  hipObjS3Status_t st = xml_request(&r, "POST", u, "uploads=", NULL, 0, res);
  if (st == hipObjS3Ok &&
      !ho_s3_xml_text(r.xml, r.xml_len, "UploadId", u->id, sizeof u->id))
    st = ho_s3_fail(res, hipObjS3ProtocolError, "CreateMultipartUpload "
                    "answered without an UploadId");
  if (st == hipObjS3Ok && (!u->id[0] ||
                           !ho_s3_uri_encode(u->id, strlen(u->id), false,
                                             u->id_enc, sizeof u->id_enc)))
    st = ho_s3_fail(res, hipObjS3ProtocolError, "unusable UploadId");
  ho_s3_req_cleanup(&r);
  return st;
}

static void abort_upload(struct upload *u)
{
  struct ho_s3_req r;
  hipObjS3Result_t ignored;
  char query[sizeof u->id_enc + 16];
  ho_s3_result_clear(&ignored);
  snprintf(query, sizeof query, "uploadId=%s", u->id_enc);
  xml_request(&r, "DELETE", u, query, NULL, 0, &ignored);
  ho_s3_req_cleanup(&r);
}

/* ---- ETags of RDMA parts ----------------------------------------------- */

/* One <Part> of ListParts: fills the ETag of a part that lacks one. */
static void list_part(struct upload *u, const char *p, size_t len)
{
  char num[16], etag[HIPOBJ_S3_ETAG_LEN];
  char *end = NULL;
  if (!ho_s3_xml_text(p, len, "PartNumber", num, sizeof num) ||
      !ho_s3_xml_text(p, len, "ETag", etag, sizeof etag))
    return;
  unsigned long n = strtoul(num, &end, 10);
  if (!end || *end || n < 1 || n > u->x->n_parts)
    return;
  struct ho_s3_part *part = &u->x->parts[n - 1];
  if (!part->etag[0])
    snprintf(part->etag, sizeof part->etag, "%s", etag);
}

/* One page of ListParts; *marker is the next page's, 0 at the end. */
static hipObjS3Status_t list_page(struct upload *u, unsigned *marker,
                                  hipObjS3Result_t *res)
{
  struct ho_s3_req r;
  char query[sizeof u->id_enc + 80], flag[8], next[16];
  snprintf(query, sizeof query,
           "max-parts=1000&part-number-marker=%u&uploadId=%s", *marker,
           u->id_enc);
  hipObjS3Status_t st = xml_request(&r, "GET", u, query, NULL, 0, res);
  if (st == hipObjS3Ok) {
    const char *p;
    size_t len, pos = 0;
    while (ho_s3_xml_span(r.xml, r.xml_len, &pos, "Part", &p, &len))
      list_part(u, p, len);
    unsigned long m = 0;
    if (ho_s3_xml_text(r.xml, r.xml_len, "IsTruncated", flag, sizeof flag) &&
        !strcmp(flag, "true") &&
        ho_s3_xml_text(r.xml, r.xml_len, "NextPartNumberMarker", next,
                       sizeof next))
      m = strtoul(next, NULL, 10);
    *marker = (m > *marker && m < HO_S3_MAX_PARTS) ? (unsigned)m : 0;
  }
  ho_s3_req_cleanup(&r);
  return st;
}

static hipObjS3Status_t fill_etags(struct upload *u, hipObjS3Result_t *res)
{
  unsigned marker = 0;
  bool missing = false;
  for (unsigned i = 0; i < u->x->n_parts; i++)
    missing = missing || !u->x->parts[i].etag[0];
  if (!missing)
    return hipObjS3Ok;
  do {
    hipObjS3Status_t st = list_page(u, &marker, res);
    if (st != hipObjS3Ok)
      return st;
  } while (marker);
  for (unsigned i = 0; i < u->x->n_parts; i++)
    if (!u->x->parts[i].etag[0])
      return ho_s3_fail(res, hipObjS3ProtocolError, "ListParts does not "
                        "list part %u", i + 1);
  return hipObjS3Ok;
}

/* ---- complete ------------------------------------------------------------ */

static bool put_raw(char *out, size_t cap, size_t *o, const char *s)
{
  size_t n = strlen(s);
  if (cap - *o <= n)
    return false;
  memcpy(out + *o, s, n + 1);
  *o += n;
  return true;
}

/* XML-escapes s into out at *o. */
static bool put_text(char *out, size_t cap, size_t *o, const char *s)
{
  bool ok = true;
  for (; *s && ok; s++) {
    char one[2] = {*s, 0};
    ok = put_raw(out, cap, o,
                 *s == '&' ? "&amp;" : *s == '<' ? "&lt;"
                                     : *s == '>' ? "&gt;" : one);
  }
  return ok;
}

static char *complete_body(const struct upload *u, size_t *len)
{
  size_t cap = 128 + (size_t)u->x->n_parts * (64 + 3 * HIPOBJ_S3_ETAG_LEN);
  char *b = malloc(cap);
  size_t o = 0;
  char num[16];
  bool ok = b != NULL;
  if (ok)
    ok = put_raw(b, cap, &o, "<CompleteMultipartUpload>");
  for (unsigned i = 0; ok && i < u->x->n_parts; i++) {
    snprintf(num, sizeof num, "%u", u->x->parts[i].number);
    ok = put_raw(b, cap, &o, "<Part><PartNumber>") &&
         put_raw(b, cap, &o, num) &&
         put_raw(b, cap, &o, "</PartNumber><ETag>") &&
         put_text(b, cap, &o, u->x->parts[i].etag) &&
         put_raw(b, cap, &o, "</ETag></Part>");
  }
  ok = ok && put_raw(b, cap, &o, "</CompleteMultipartUpload>");
  if (!ok) {
    free(b);
    return NULL;
  }
  *len = o;
  return b;
}

static hipObjS3Status_t complete_upload(struct upload *u,
                                        hipObjS3Result_t *res)
{
  struct ho_s3_req r;
  size_t len = 0;
  char query[sizeof u->id_enc + 16];
  char *body = complete_body(u, &len);
  if (!body)
    return ho_s3_fail(res, hipObjS3OutOfMemory, "out of memory");
  snprintf(query, sizeof query, "uploadId=%s", u->id_enc);
  hipObjS3Status_t st = xml_request(&r, "POST", u, query, body, len, res);
  /* S3 may answer 200 and put the error in the body. */
  if (st == hipObjS3Ok && ho_s3_xml_text(r.xml, r.xml_len, "Code",
                                         res->s3Code, sizeof res->s3Code))
    st = ho_s3_http_failure(&u->x->client->s, &r.target, 500, r.xml,
                            r.xml_len, res);
  if (st == hipObjS3Ok)
    ho_s3_xml_text(r.xml, r.xml_len, "ETag", res->etag, sizeof res->etag);
  ho_s3_req_cleanup(&r);
  free(body);
  return st;
}

hipObjS3Status_t ho_s3_multipart_put(struct ho_s3_xfer *x,
                                     hipObjS3Result_t *res)
{
  struct upload *u = calloc(1, sizeof *u);
  if (!u)
    return ho_s3_fail(res, hipObjS3OutOfMemory, "out of memory");
  u->x = x;
  hipObjS3Status_t st = ho_s3_xfer_plan(x, 0, true, res);
  if (st != hipObjS3Ok)
    goto free_upload;
  if ((st = create_upload(u, res)) != hipObjS3Ok)
    goto free_upload;
  x->upload_id = u->id;
  hipObjS3Result_t moved;
  ho_s3_result_clear(&moved);
  if ((st = ho_s3_xfer_run(x, &moved)) != hipObjS3Ok) {
    *res = moved;
    goto abort;
  }
  if ((st = fill_etags(u, res)) != hipObjS3Ok ||
      (st = complete_upload(u, res)) != hipObjS3Ok) {
    moved.status = st;
    snprintf(moved.message, sizeof moved.message, "%s", res->message);
    snprintf(moved.s3Code, sizeof moved.s3Code, "%s", res->s3Code);
    moved.httpStatus = res->httpStatus;
    *res = moved;
    goto abort;
  }
  snprintf(moved.etag, sizeof moved.etag, "%s", res->etag);
  *res = moved;
  goto free_upload;

abort:
  abort_upload(u);
free_upload:
  free(u);
  return st;
}
