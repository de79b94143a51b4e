/* SPDX-License-Identifier: MIT */
/* ListObjects (v1), ListObjectsV2 and ListObjectVersions (of buckets that
 * are never versioned: every object is its one version, "null"):
 * parameters, paging tokens, XML. */
#include <stdlib.h>
#include <string.h>

#include "store/lister.h"
#include "s3_internal.h"
#include "xml.h"

#define S3_NS "http://s3.amazonaws.com/doc/2006-03-01/"
#define MAX_KEYS 1000

enum list_kind { LIST_V1, LIST_V2, LIST_VERSIONS };

struct list_params {
  enum list_kind kind;
  const char *prefix;
  const char *delim;
  const char *start_after; /* v2 */
  const char *marker;      /* v1; key-marker of versions */
  const char *token;       /* v2, as given; NULL if empty */
  const char *token_echo;  /* v2, as given, empty or not */
  char *token_key;         /* v2, decoded */
  size_t max;
  bool url;
  bool owner;
};

static const char *param(const struct hs_op *op, const char *name)
{
  const struct hs_param *p = hs_query_get(&op->query, name);
  return p ? p->value : NULL;
}

static enum hs_err parse_max_keys(const char *v, size_t *out)
{
  if (!v) {
    *out = MAX_KEYS;
    return HS_OK;
  }
  size_t n = strlen(v);
  if (n == 0 || n > 9)
    return HS_ERR_INVALID_ARGUMENT;
  unsigned long x = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return HS_ERR_INVALID_ARGUMENT;
    x = x * 10 + (unsigned long)(v[i] - '0');
  }
  *out = x > MAX_KEYS ? MAX_KEYS : (size_t)x;
  return HS_OK;
}

/* Tokens are the hex of the last key or prefix of the previous page. */
static enum hs_err decode_token(const char *t, char **out)
{
  size_t n = strlen(t);
  if (n == 0 || n % 2 || n / 2 > HS_KEY_MAX)
    return HS_ERR_INVALID_ARGUMENT;
  char *k = malloc(n / 2 + 1);
  if (!k)
    return HS_ERR_NOMEM;
  if (!hs_unhex(t, n, (uint8_t *)k, n / 2) || memchr(k, '\0', n / 2) ||
      !hs_utf8_valid(k, n / 2)) {
    free(k);
    return HS_ERR_INVALID_ARGUMENT;
  }
  k[n / 2] = '\0';
  *out = k;
  return HS_OK;
}

static enum hs_err parse_params(const struct hs_op *op, enum list_kind kind,
                                struct list_params *p)
{
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->prefix = param(op, "prefix");
  p->delim = param(op, "delimiter");
  if (p->delim && !*p->delim)
    p->delim = NULL; /* no delimiter: S3 omits it from the result */
  const char *enc = param(op, "encoding-type");
  if (enc && strcmp(enc, "url") != 0)
    return HS_ERR_INVALID_ARGUMENT;
  p->url = enc != NULL;
  enum hs_err err = parse_max_keys(param(op, "max-keys"), &p->max);
  if (err)
    return err;
  if (kind != LIST_V2) {
    p->marker = param(op, kind == LIST_V1 ? "marker" : "key-marker");
    p->owner = true;
    return HS_OK;
  }
  p->start_after = param(op, "start-after");
  const char *fo = param(op, "fetch-owner");
  p->owner = fo && strcmp(fo, "true") == 0;
  p->token = p->token_echo = param(op, "continuation-token");
  if (p->token && !*p->token)
    p->token = NULL; /* empty: from the start, as S3 does */
  if (p->token)
    return decode_token(p->token, &p->token_key);
  return HS_OK;
}

static void put_str(struct hs_buf *b, const char *tag, const char *s, bool url)
{
  hs_buf_printf(b, "<%s>", tag);
  if (url) {
    struct hs_buf e;
    hs_buf_init(&e, 0);
    hs_uri_encode(&e, s, strlen(s), true);
    hs_xml_escape(b, hs_buf_cstr(&e), e.len);
    if (e.failed)
      b->failed = true;
    hs_buf_free(&e);
  } else {
    hs_xml_escape(b, s, strlen(s));
  }
  hs_buf_printf(b, "</%s>", tag);
}

static void put_items(struct hs_buf *b, const struct hs_lister *l,
                      const struct list_params *p)
{
  for (size_t i = 0; i < l->n; i++) {
    const struct hs_list_item *it = &l->items[i];
    if (it->is_prefix)
      continue;
    char date[32];
    hs_time_iso8601(it->mtime, date);
    bool versions = p->kind == LIST_VERSIONS;
    hs_buf_puts(b, versions ? "<Version>" : "<Contents>");
    put_str(b, "Key", it->key, p->url);
    if (versions)
      hs_buf_puts(b, "<VersionId>null</VersionId><IsLatest>true</IsLatest>");
    hs_buf_printf(b,
                  "<LastModified>%s</LastModified><ETag>&quot;%s&quot;</ETag>"
                  "<Size>%llu</Size>",
                  date, it->etag, (unsigned long long)it->size);
    if (p->owner)
      hs_buf_puts(b, "<Owner><ID>hipobj</ID><DisplayName>hipobj"
                     "</DisplayName></Owner>");
    hs_buf_puts(b, versions ? "<StorageClass>STANDARD</StorageClass>"
                              "</Version>"
                            : "<StorageClass>STANDARD</StorageClass>"
                              "</Contents>");
  }
  for (size_t i = 0; i < l->n; i++) {
    if (!l->items[i].is_prefix)
      continue;
    hs_buf_puts(b, "<CommonPrefixes>");
    put_str(b, "Prefix", l->items[i].key, p->url);
    hs_buf_puts(b, "</CommonPrefixes>");
  }
}

/* ListObjectVersions' markers: the next page starts after a key, and its
 * one version. */
static void put_version_markers(const struct hs_op *op, struct hs_buf *b,
                                const struct hs_lister *l,
                                const struct list_params *p)
{
  const char *vm = param(op, "version-id-marker");
  put_str(b, "KeyMarker", p->marker ? p->marker : "", p->url);
  put_str(b, "VersionIdMarker", vm ? vm : "", false);
  const char *last = hs_lister_last(l);
  if (l->truncated && last) {
    put_str(b, "NextKeyMarker", last, p->url);
    put_str(b, "NextVersionIdMarker", "null", false);
  }
}

static void write_result(struct hs_op *op, const struct hs_lister *l,
                         const struct list_params *p)
{
  bool v2 = p->kind == LIST_V2;
  const char *root = p->kind == LIST_VERSIONS ? "ListVersionsResult"
                                              : "ListBucketResult";
  hs_op_xml_begin(op, 200);
  struct hs_buf *b = &op->resp.body;
  hs_buf_printf(b, "<%s xmlns=\"" S3_NS "\">", root);
  put_str(b, "Name", op->bucket, false);
  /* ListObjects (v1) encodes neither Prefix nor the prefix in it (S3's
   * documentation; botocore decodes it only in the others) */
  put_str(b, "Prefix", p->prefix ? p->prefix : "",
          p->url && p->kind != LIST_V1);
  if (p->kind == LIST_V1)
    put_str(b, "Marker", p->marker ? p->marker : "", p->url);
  else if (p->kind == LIST_VERSIONS)
    put_version_markers(op, b, l, p);
  if (p->delim)
    put_str(b, "Delimiter", p->delim, p->url);
  hs_buf_printf(b, "<MaxKeys>%zu</MaxKeys>", p->max);
  if (p->url)
    hs_buf_puts(b, "<EncodingType>url</EncodingType>");
  hs_buf_printf(b, "<IsTruncated>%s</IsTruncated>",
                l->truncated ? "true" : "false");
  const char *last = hs_lister_last(l);
  if (v2) {
    hs_buf_printf(b, "<KeyCount>%zu</KeyCount>", l->n);
    if (p->token_echo) /* an empty one too */
      put_str(b, "ContinuationToken", p->token_echo, false);
    if (p->start_after)
      put_str(b, "StartAfter", p->start_after, p->url);
    if (l->truncated && last) {
      size_t n = strlen(last);
      char *hex = malloc(2 * n + 1);
      if (hex) {
        hs_hex((const uint8_t *)last, n, hex);
        put_str(b, "NextContinuationToken", hex, false);
        free(hex);
      } else {
        b->failed = true;
      }
    }
  } else if (p->kind == LIST_V1 && l->truncated && last) {
    put_str(b, "NextMarker", last, p->url);
  }
  put_items(b, l, p);
  hs_buf_printf(b, "</%s>\n", root);
}

static void list(struct hs_op *op, enum list_kind kind)
{
  struct list_params p;
  enum hs_err err = parse_params(op, kind, &p);
  if (err) {
    hs_op_error(op, err);
    return;
  }
  const char *after = kind == LIST_V2 ? p.start_after : p.marker;
  if (p.token_key && (!after || strcmp(p.token_key, after) > 0))
    after = p.token_key;
  struct hs_lister l;
  hs_lister_init(&l, p.prefix, p.delim, after, p.max);
  const char *from;
  bool inclusive;
  hs_lister_start(&l, &from, &inclusive);
  err = hs_store_list(op->srv->store, op->bucket, from, inclusive,
                      hs_lister_add, &l);
  if (!err)
    err = l.err;
  if (err)
    hs_op_error(op, err);
  else
    write_result(op, &l, &p);
  hs_lister_free(&l);
  free(p.token_key);
}

void hs_s3_list_objects(struct hs_op *op, bool v2)
{
  list(op, v2 ? LIST_V2 : LIST_V1);
}

void hs_s3_list_versions(struct hs_op *op) { list(op, LIST_VERSIONS); }
