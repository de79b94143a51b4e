/* SPDX-License-Identifier: MIT */
#include "s3_xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "timefmt.h"
#include "uri.h"
#include "xml.h"

static bool leaf_text(const struct hs_xml_doc *d, int node, const char **t,
                      size_t *len)
{
  if (node < 0 || d->nodes[node].first_child >= 0)
    return false;
  *t = d->nodes[node].text ? d->nodes[node].text : "";
  *len = d->nodes[node].text_len;
  return true;
}

/* Exactly one child named `name`, a leaf. */
static int only_child(const struct hs_xml_doc *d, int parent, const char *name)
{
  int c = hs_xml_child(d, parent, name);
  if (c < 0 || hs_xml_next(d, c, name) >= 0 || d->nodes[c].first_child >= 0)
    return -1;
  return c;
}

static bool parse_part_number(const char *t, size_t len, unsigned *out)
{
  /* S3 tolerates blanks around numbers in bodies; clients send none. */
  while (len && (*t == ' ' || *t == '\n' || *t == '\t' || *t == '\r')) {
    t++;
    len--;
  }
  while (len && (t[len - 1] == ' ' || t[len - 1] == '\n' ||
                 t[len - 1] == '\t' || t[len - 1] == '\r'))
    len--;
  if (len == 0 || len > 5)
    return false;
  unsigned v = 0;
  for (size_t i = 0; i < len; i++) {
    if (t[i] < '0' || t[i] > '9')
      return false;
    v = v * 10 + (unsigned)(t[i] - '0');
  }
  if (v < 1 || v > HS_MAX_PARTS)
    return false;
  *out = v;
  return true;
}

enum hs_err hs_parse_complete(const char *body, size_t len,
                              struct hs_part_ref **parts, size_t *n)
{
  struct hs_xml_doc d;
  enum hs_err err = hs_xml_parse(body, len, &d);
  if (err)
    return err;
  struct hs_part_ref *out = NULL;
  size_t count = 0;
  err = HS_ERR_MALFORMED_XML;
  if (!hs_xml_is(&d, 0, "CompleteMultipartUpload"))
    goto out_doc;
  for (int c = hs_xml_child(&d, 0, "Part"); c >= 0;
       c = hs_xml_next(&d, c, "Part"))
    count++;
  if (count == 0 || count > HS_MAX_PARTS)
    goto out_doc;
  out = calloc(count, sizeof *out);
  if (!out) {
    err = HS_ERR_NOMEM;
    goto out_doc;
  }
  size_t i = 0;
  for (int c = hs_xml_child(&d, 0, "Part"); c >= 0;
       c = hs_xml_next(&d, c, "Part"), i++) {
    const char *t;
    size_t tl;
    if (!leaf_text(&d, only_child(&d, c, "PartNumber"), &t, &tl) ||
        !parse_part_number(t, tl, &out[i].number))
      goto out_parts;
    if (!leaf_text(&d, only_child(&d, c, "ETag"), &t, &tl) ||
        !hs_etag_normalize(t, tl, out[i].etag))
      goto out_parts;
  }
  hs_xml_free(&d);
  *parts = out;
  *n = count;
  return HS_OK;
out_parts:
  free(out);
out_doc:
  hs_xml_free(&d);
  return err;
}

void hs_delete_list_free(struct hs_delete_list *l)
{
  if (!l)
    return;
  for (size_t i = 0; i < l->n; i++)
    free(l->keys[i]);
  for (size_t i = 0; l->conds && i < l->n; i++)
    free(l->conds[i].etag);
  free(l->keys);
  free(l->versions);
  free(l->conds);
  l->keys = NULL;
  l->versions = NULL;
  l->conds = NULL;
  l->n = 0;
}

static bool parse_bool(const char *t, size_t len, bool *out)
{
  if (len == 4 && memcmp(t, "true", 4) == 0)
    *out = true;
  else if (len == 5 && memcmp(t, "false", 5) == 0)
    *out = false;
  else
    return false;
  return true;
}

/* An Object's ETag, LastModifiedTime and Size, if given. */
static enum hs_err delete_cond(const struct hs_xml_doc *d, int obj,
                               struct hs_delete_cond *c)
{
  const char *t;
  size_t tl;
  int e = hs_xml_child(d, obj, "ETag");
  int m = hs_xml_child(d, obj, "LastModifiedTime");
  int z = hs_xml_child(d, obj, "Size");
  if (e >= 0) {
    if (!leaf_text(d, e, &t, &tl) || tl == 0 || tl > 2 * HS_ETAG_MAX ||
        memchr(t, '\0', tl))
      return HS_ERR_MALFORMED_XML;
    if (!(c->etag = strndup(t, tl)))
      return HS_ERR_NOMEM;
  }
  if (m >= 0) { /* ISO 8601, or an IMF-fixdate as botocore sends it */
    char http[40];
    if (!leaf_text(d, m, &t, &tl))
      return HS_ERR_MALFORMED_XML;
    snprintf(http, sizeof http, "%.*s", (int)(tl < 39 ? tl : 39), t);
    if (!hs_time_parse_iso8601(t, tl, &c->mtime) &&
        !(tl < sizeof http && hs_time_parse_http(http, &c->mtime)))
      return HS_ERR_MALFORMED_XML;
  }
  c->has_mtime = m >= 0;
  if (z >= 0) {
    if (!leaf_text(d, z, &t, &tl) || tl == 0 || tl > 19)
      return HS_ERR_MALFORMED_XML;
    for (size_t i = 0; i < tl; i++) {
      if (t[i] < '0' || t[i] > '9')
        return HS_ERR_MALFORMED_XML;
      c->size = c->size * 10 + (uint64_t)(t[i] - '0');
    }
    c->has_size = true;
  }
  return HS_OK;
}

enum hs_err hs_parse_delete(const char *body, size_t len,
                            struct hs_delete_list *out)
{
  struct hs_xml_doc d;
  enum hs_err err = hs_xml_parse(body, len, &d);
  if (err)
    return err;
  struct hs_delete_list l = {
      .keys = NULL, .versions = NULL, .conds = NULL, .n = 0, .quiet = false};
  err = HS_ERR_MALFORMED_XML;
  if (!hs_xml_is(&d, 0, "Delete"))
    goto fail;
  int q = hs_xml_child(&d, 0, "Quiet");
  const char *t;
  size_t tl;
  if (q >= 0 && (!leaf_text(&d, q, &t, &tl) || !parse_bool(t, tl, &l.quiet)))
    goto fail;
  size_t count = 0;
  for (int c = hs_xml_child(&d, 0, "Object"); c >= 0;
       c = hs_xml_next(&d, c, "Object"))
    count++;
  if (count == 0 || count > HS_MAX_DELETE)
    goto fail;
  l.keys = calloc(count, sizeof *l.keys);
  l.versions = calloc(count, sizeof *l.versions);
  l.conds = calloc(count, sizeof *l.conds);
  if (!l.keys || !l.versions || !l.conds) {
    err = HS_ERR_NOMEM;
    goto fail;
  }
  for (int c = hs_xml_child(&d, 0, "Object"); c >= 0;
       c = hs_xml_next(&d, c, "Object")) {
    if (!leaf_text(&d, only_child(&d, c, "Key"), &t, &tl) || tl == 0 ||
        tl > HS_KEY_MAX || memchr(t, '\0', tl) || !hs_utf8_valid(t, tl))
      goto fail;
    char *k = malloc(tl + 1);
    if (!k) {
      err = HS_ERR_NOMEM;
      goto fail;
    }
    memcpy(k, t, tl);
    k[tl] = '\0';
    int v = hs_xml_child(&d, c, "VersionId");
    l.versions[l.n] = HS_DEL_CURRENT;
    if (v >= 0)
      l.versions[l.n] = leaf_text(&d, v, &t, &tl) && tl == 4 &&
                                memcmp(t, "null", 4) == 0
                            ? HS_DEL_NULL_VERSION
                            : HS_DEL_OTHER_VERSION;
    l.keys[l.n++] = k;
    if ((err = delete_cond(&d, c, &l.conds[l.n - 1])))
      goto fail;
    err = HS_ERR_MALFORMED_XML;
  }
  hs_xml_free(&d);
  *out = l;
  return HS_OK;
fail:
  hs_delete_list_free(&l);
  hs_xml_free(&d);
  return err;
}

enum hs_err hs_parse_create_bucket(const char *body, size_t len)
{
  bool blank = true;
  for (size_t i = 0; i < len; i++)
    blank = blank && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' ||
                      body[i] == '\t');
  if (blank)
    return HS_OK;
  struct hs_xml_doc d;
  enum hs_err err = hs_xml_parse(body, len, &d);
  if (err)
    return err;
  bool ok = hs_xml_is(&d, 0, "CreateBucketConfiguration");
  hs_xml_free(&d);
  return ok ? HS_OK : HS_ERR_MALFORMED_XML;
}

/* ---- tags --------------------------------------------------------------- */

/* Characters (code points) of valid UTF-8. */
static size_t chars(const char *s, size_t n)
{
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    c += ((unsigned char)s[i] & 0xc0) != 0x80;
  return c;
}

static bool no_controls(const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
      return false;
  return hs_utf8_valid(s, n);
}

/* Appends one tag to b (lines), after S3's checks. */
static enum hs_err tag_add(struct hs_buf *b, unsigned *n, const char *k,
                           size_t kl, const char *v, size_t vl,
                           const char **msg)
{
  *msg = "Object tags cannot be greater than 10";
  if (++*n > HS_MAX_TAGS)
    return HS_ERR_INVALID_TAG;
  *msg = "The TagKey you have provided is not valid";
  if (kl == 0 || chars(k, kl) > 128 || !no_controls(k, kl))
    return HS_ERR_INVALID_TAG;
  *msg = "The TagValue you have provided is not valid";
  if (chars(v, vl) > 256 || !no_controls(v, vl))
    return HS_ERR_INVALID_TAG;
  *msg = "Cannot provide multiple Tags with the same key";
  const char *lines = b->len ? hs_buf_cstr(b) : "";
  for (const char *l = lines; *l;) {
    const char *tab = strchr(l, '\t'), *nl = strchr(l, '\n');
    if (tab && (size_t)(tab - l) == kl && memcmp(l, k, kl) == 0)
      return HS_ERR_INVALID_TAG;
    l = nl ? nl + 1 : l + strlen(l);
  }
  *msg = NULL;
  hs_buf_append(b, k, kl);
  hs_buf_append(b, "\t", 1);
  hs_buf_append(b, v, vl);
  hs_buf_append(b, "\n", 1);
  return b->failed ? HS_ERR_NOMEM : HS_OK;
}

static int line_cmp(const void *x, const void *y)
{
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The lines of b sorted by key (S3 returns a tag set so), into *out. */
static enum hs_err tags_out(struct hs_buf *b, char **out)
{
  const char *in = b->len ? hs_buf_cstr(b) : "";
  size_t len = strlen(in), n = 0;
  char *copy = strdup(in), *t = malloc(len + 1);
  char *lines[HS_MAX_TAGS];
  enum hs_err err = copy && t ? HS_OK : HS_ERR_NOMEM;
  for (char *l = copy; !err && l && *l && n < HS_MAX_TAGS; n++) {
    char *nl = strchr(l, '\n');
    lines[n] = l;
    *nl = '\0'; /* a key holds no tab or control character: "k\t" < "kx" */
    l = nl + 1;
  }
  if (!err) {
    qsort(lines, n, sizeof lines[0], line_cmp);
    t[0] = '\0';
    for (size_t i = 0; i < n; i++) {
      strcat(t, lines[i]);
      strcat(t, "\n");
    }
    *out = t;
    t = NULL;
  }
  free(copy);
  free(t);
  hs_buf_free(b);
  return err;
}

enum hs_err hs_parse_tagging(const char *body, size_t len, char **out,
                             const char **msg)
{
  struct hs_xml_doc d;
  *msg = NULL;
  enum hs_err err = hs_xml_parse(body, len, &d);
  if (err)
    return err;
  struct hs_buf b;
  hs_buf_init(&b, 0);
  unsigned n = 0;
  int set = hs_xml_child(&d, 0, "TagSet");
  err = HS_ERR_MALFORMED_XML;
  if (!hs_xml_is(&d, 0, "Tagging") || set < 0 ||
      hs_xml_next(&d, set, "TagSet") >= 0)
    goto out;
  err = HS_OK;
  for (int c = hs_xml_child(&d, set, "Tag"); c >= 0 && !err;
       c = hs_xml_next(&d, c, "Tag")) {
    const char *k, *v;
    size_t kl, vl;
    if (!leaf_text(&d, only_child(&d, c, "Key"), &k, &kl) ||
        !leaf_text(&d, only_child(&d, c, "Value"), &v, &vl))
      err = HS_ERR_MALFORMED_XML;
    else
      err = tag_add(&b, &n, k, kl, v, vl, msg);
  }
out:
  hs_xml_free(&d);
  if (err) {
    hs_buf_free(&b);
    return err;
  }
  return tags_out(&b, out);
}

enum hs_err hs_parse_tagging_header(const char *v, char **out,
                                    const char **msg)
{
  struct hs_query q;
  *msg = "The header x-amz-tagging is not a valid URL-encoded tag set";
  enum hs_err err = hs_query_parse(v, strlen(v), &q);
  if (err)
    return err == HS_ERR_NOMEM ? err : HS_ERR_INVALID_TAG;
  struct hs_buf b;
  hs_buf_init(&b, 0);
  unsigned n = 0;
  for (size_t i = 0; i < q.n && !err; i++)
    err = tag_add(&b, &n, q.p[i].name, strlen(q.p[i].name), q.p[i].value,
                  strlen(q.p[i].value), msg);
  hs_query_free(&q);
  if (err) {
    hs_buf_free(&b);
    return err;
  }
  return tags_out(&b, out);
}
