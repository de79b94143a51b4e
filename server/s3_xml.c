/* SPDX-License-Identifier: MIT */
#include "s3_xml.h"

#include <stdlib.h>
#include <string.h>

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
  free(l->keys);
  free(l->versions);
  l->keys = NULL;
  l->versions = NULL;
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

enum hs_err hs_parse_delete(const char *body, size_t len,
                            struct hs_delete_list *out)
{
  struct hs_xml_doc d;
  enum hs_err err = hs_xml_parse(body, len, &d);
  if (err)
    return err;
  struct hs_delete_list l = {
      .keys = NULL, .versions = NULL, .n = 0, .quiet = false};
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
  if (!l.keys || !l.versions) {
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
