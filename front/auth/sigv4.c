/* SPDX-License-Identifier: MIT */
#include "sigv4.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>

static bool is_digits(const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

/* Copies [s, s+n) into out[cap] if it fits, has no control characters and
 * is not empty. */
static bool copy_field(char *out, size_t cap, const char *s, size_t n)
{
  if (n == 0 || n >= cap)
    return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x21 || s[i] == 0x7f)
      return false;
  memcpy(out, s, n);
  out[n] = '\0';
  return true;
}

/* K/YYYYMMDD/region/service/aws4_request */
static bool parse_credential(const char *s, size_t n, struct hs_sigv4_auth *a)
{
  const char *part[5];
  size_t plen[5];
  size_t k = 0;
  const char *start = s;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || s[i] == '/') {
      if (k == 5)
        return false;
      part[k] = start;
      plen[k++] = (size_t)(s + i - start);
      start = s + i + 1;
    }
  }
  if (k != 5 || plen[4] != 12 || memcmp(part[4], "aws4_request", 12) != 0)
    return false;
  if (plen[1] != 8 || !is_digits(part[1], 8))
    return false;
  return copy_field(a->access_key, sizeof a->access_key, part[0], plen[0]) &&
         copy_field(a->date, sizeof a->date, part[1], plen[1]) &&
         copy_field(a->region, sizeof a->region, part[2], plen[2]) &&
         copy_field(a->service, sizeof a->service, part[3], plen[3]);
}

static bool is_header_name_char(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

/* Lower-case names separated by ';', strictly ascending. */
static bool parse_signed_headers(const char *s, size_t n,
                                 struct hs_sigv4_auth *a)
{
  if (n == 0 || n > HS_SIGV4_SIGNED_MAX)
    return false;
  const char *prev = NULL;
  size_t prev_len = 0;
  const char *start = s;
  for (size_t i = 0; i <= n; i++) {
    if (i < n && s[i] != ';') {
      if (!is_header_name_char(s[i]))
        return false;
      continue;
    }
    size_t len = (size_t)(s + i - start);
    if (len == 0)
      return false;
    if (prev) {
      size_t m = len < prev_len ? len : prev_len;
      int c = memcmp(prev, start, m);
      if (c > 0 || (c == 0 && prev_len >= len))
        return false;
    }
    prev = start;
    prev_len = len;
    start = s + i + 1;
  }
  memcpy(a->signed_headers, s, n);
  a->signed_headers[n] = '\0';
  return true;
}

static bool parse_signature(const char *s, size_t n, struct hs_sigv4_auth *a)
{
  return hs_unhex(s, n, a->signature, sizeof a->signature);
}

enum hs_err hs_sigv4_parse_header(const char *s, size_t len,
                                  struct hs_sigv4_auth *out)
{
  const size_t alen = strlen(HS_SIGV4_ALGORITHM);
  if (!s || len <= alen || memcmp(s, HS_SIGV4_ALGORITHM, alen) != 0 ||
      s[alen] != ' ')
    return HS_ERR_AUTH_HEADER;
  struct hs_sigv4_auth a;
  memset(&a, 0, sizeof a);
  bool cred = false, sh = false, sig = false;
  size_t i = alen;
  while (i < len) {
    while (i < len && s[i] == ' ')
      i++;
    const char *comma = memchr(s + i, ',', len - i);
    size_t end = comma ? (size_t)(comma - s) : len;
    size_t vend = end;
    while (vend > i && s[vend - 1] == ' ')
      vend--;
    const char *eq = memchr(s + i, '=', vend - i);
    if (!eq)
      return HS_ERR_AUTH_HEADER;
    size_t nlen = (size_t)(eq - (s + i));
    const char *v = eq + 1;
    size_t vlen = (size_t)(s + vend - v);
    bool ok;
    if (nlen == 10 && memcmp(s + i, "Credential", 10) == 0 && !cred)
      ok = cred = parse_credential(v, vlen, &a);
    else if (nlen == 13 && memcmp(s + i, "SignedHeaders", 13) == 0 && !sh)
      ok = sh = parse_signed_headers(v, vlen, &a);
    else if (nlen == 9 && memcmp(s + i, "Signature", 9) == 0 && !sig)
      ok = sig = parse_signature(v, vlen, &a);
    else
      ok = false;
    if (!ok)
      return HS_ERR_AUTH_HEADER;
    i = comma ? end + 1 : len;
    if (comma && i == len)
      return HS_ERR_AUTH_HEADER; /* trailing comma */
  }
  if (!cred || !sh || !sig)
    return HS_ERR_AUTH_HEADER;
  *out = a;
  return HS_OK;
}

static const char *only_param(const struct hs_query *q, const char *name)
{
  const char *v = NULL;
  for (size_t i = 0; i < q->n; i++) {
    if (strcmp(q->p[i].name, name) != 0)
      continue;
    if (v)
      return NULL;
    v = q->p[i].value;
  }
  return v;
}

bool hs_sigv4_parse_time(const char *s, int64_t *out)
{
  if (strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z' || !is_digits(s, 8) ||
      !is_digits(s + 9, 6))
    return false;
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  tm.tm_year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 +
               (s[3] - '0') - 1900;
  tm.tm_mon = (s[4] - '0') * 10 + (s[5] - '0') - 1;
  tm.tm_mday = (s[6] - '0') * 10 + (s[7] - '0');
  tm.tm_hour = (s[9] - '0') * 10 + (s[10] - '0');
  tm.tm_min = (s[11] - '0') * 10 + (s[12] - '0');
  tm.tm_sec = (s[13] - '0') * 10 + (s[14] - '0');
  if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
    return false;
  time_t t = timegm(&tm);
  if (t == (time_t)-1)
    return false;
  *out = (int64_t)t;
  return true;
}

enum hs_err hs_sigv4_parse_query(const struct hs_query *q,
                                 struct hs_sigv4_auth *out)
{
  const char *alg = only_param(q, "X-Amz-Algorithm");
  const char *cred = only_param(q, "X-Amz-Credential");
  const char *date = only_param(q, "X-Amz-Date");
  const char *exp = only_param(q, "X-Amz-Expires");
  const char *sh = only_param(q, "X-Amz-SignedHeaders");
  const char *sig = only_param(q, "X-Amz-Signature");
  if (!alg || !cred || !date || !exp || !sh || !sig ||
      strcmp(alg, HS_SIGV4_ALGORITHM) != 0)
    return HS_ERR_AUTH_HEADER;
  struct hs_sigv4_auth a;
  memset(&a, 0, sizeof a);
  size_t elen = strlen(exp);
  int64_t t;
  if (!parse_credential(cred, strlen(cred), &a) ||
      !parse_signed_headers(sh, strlen(sh), &a) ||
      !parse_signature(sig, strlen(sig), &a) ||
      !hs_sigv4_parse_time(date, &t))
    return HS_ERR_AUTH_HEADER;
  /* 0, negative, more than seven days, not a number: S3's own error */
  if (elen == 0 || elen > 6 || !is_digits(exp, elen))
    return HS_ERR_AUTH_QUERY;
  a.expires = (uint32_t)strtoul(exp, NULL, 10);
  if (a.expires < 1 || a.expires > 604800)
    return HS_ERR_AUTH_QUERY;
  memcpy(a.amz_date, date, 17);
  a.presigned = true;
  *out = a;
  return HS_OK;
}

bool hs_sigv4_signs(const struct hs_sigv4_auth *a, const char *name)
{
  size_t n = strlen(name);
  const char *s = a->signed_headers;
  while (*s) {
    const char *semi = strchr(s, ';');
    size_t len = semi ? (size_t)(semi - s) : strlen(s);
    if (len == n && memcmp(s, name, n) == 0)
      return true;
    if (!semi)
      break;
    s = semi + 1;
  }
  return false;
}

/* The trimmed value with inner runs of blanks collapsed to one space. */
static void put_trimmed(struct hs_buf *out, const char *v)
{
  while (*v == ' ' || *v == '\t')
    v++;
  bool space = false;
  for (; *v; v++) {
    if (*v == ' ' || *v == '\t') {
      space = true;
      continue;
    }
    if (space)
      hs_buf_putc(out, ' ');
    space = false;
    hs_buf_putc(out, *v);
  }
}

static enum hs_err canonical_headers(const struct hs_sigv4_request *r,
                                     const struct hs_sigv4_auth *a,
                                     struct hs_buf *out)
{
  const char *s = a->signed_headers;
  char name[HS_SIGV4_SIGNED_MAX + 1];
  while (*s) {
    const char *semi = strchr(s, ';');
    size_t len = semi ? (size_t)(semi - s) : strlen(s);
    memcpy(name, s, len);
    name[len] = '\0';
    hs_buf_append(out, name, len);
    hs_buf_putc(out, ':');
    size_t found = 0;
    for (size_t i = 0; i < r->headers->n; i++) {
      if (strcasecmp(r->headers->v[i].name, name) != 0)
        continue;
      if (found++)
        hs_buf_putc(out, ',');
      put_trimmed(out, r->headers->v[i].value);
    }
    if (!found)
      return HS_ERR_AUTH_HEADER;
    hs_buf_putc(out, '\n');
    if (!semi)
      break;
    s = semi + 1;
  }
  return HS_OK;
}

struct qpair {
  char *name;
  char *value;
};

static int qpair_cmp(const void *x, const void *y)
{
  const struct qpair *a = x, *b = y;
  int c = strcmp(a->name, b->name);
  return c ? c : strcmp(a->value, b->value);
}

static char *encode_dup(const char *s)
{
  struct hs_buf b;
  hs_buf_init(&b, 0);
  hs_uri_encode(&b, s, strlen(s), false);
  if (!b.data && !b.failed)
    hs_buf_append(&b, "", 0);
  return hs_buf_take(&b, NULL);
}

static enum hs_err canonical_query(const struct hs_sigv4_request *r,
                                   const struct hs_sigv4_auth *a,
                                   struct hs_buf *out)
{
  const struct hs_query *q = r->query;
  struct qpair pairs[HS_QUERY_MAX];
  size_t n = 0;
  enum hs_err err = HS_OK;
  for (size_t i = 0; i < q->n; i++) {
    if (a->presigned && strcmp(q->p[i].name, "X-Amz-Signature") == 0)
      continue;
    pairs[n].name = encode_dup(q->p[i].name);
    pairs[n].value = encode_dup(q->p[i].value);
    n++;
    if (!pairs[n - 1].name || !pairs[n - 1].value) {
      err = HS_ERR_NOMEM;
      goto out;
    }
  }
  qsort(pairs, n, sizeof pairs[0], qpair_cmp);
  for (size_t i = 0; i < n; i++) {
    if (i)
      hs_buf_putc(out, '&');
    hs_buf_puts(out, pairs[i].name);
    hs_buf_putc(out, '=');
    hs_buf_puts(out, pairs[i].value);
  }
out:
  for (size_t i = 0; i < n; i++) {
    free(pairs[i].name);
    free(pairs[i].value);
  }
  return err;
}

/* The path decoded and re-encoded: S3 does not normalise it. */
static enum hs_err canonical_path(const struct hs_sigv4_request *r,
                                  struct hs_buf *out)
{
  char *path = malloc(r->path.len + 1);
  size_t plen;
  if (!path)
    return HS_ERR_NOMEM;
  if (!hs_pct_decode(r->path.p, r->path.len, false, path, r->path.len + 1,
                     &plen)) {
    free(path);
    return HS_ERR_INVALID_URI;
  }
  hs_uri_encode(out, path, plen, true);
  free(path);
  return HS_OK;
}

enum hs_err hs_sigv4_canonical_request(const struct hs_sigv4_request *r,
                                       const struct hs_sigv4_auth *a,
                                       const char *payload_hash,
                                       struct hs_buf *out)
{
  hs_buf_puts(out, r->method);
  hs_buf_putc(out, '\n');
  enum hs_err err = canonical_path(r, out);
  if (err)
    return err;
  hs_buf_putc(out, '\n');
  err = canonical_query(r, a, out);
  if (err)
    return err;
  hs_buf_putc(out, '\n');
  err = canonical_headers(r, a, out);
  if (err)
    return err;
  hs_buf_putc(out, '\n');
  hs_buf_puts(out, a->signed_headers);
  hs_buf_putc(out, '\n');
  hs_buf_puts(out, payload_hash);
  return out->failed ? HS_ERR_NOMEM : HS_OK;
}

void hs_sigv4_signing_key(const char *secret, const struct hs_sigv4_auth *a,
                          uint8_t key[HS_SHA256_LEN])
{
  struct hs_buf k;
  hs_buf_init(&k, 0);
  hs_buf_puts(&k, "AWS4");
  hs_buf_puts(&k, secret);
  uint8_t t[HS_SHA256_LEN];
  hs_hmac_sha256(hs_buf_cstr(&k), k.len, a->date, strlen(a->date), t);
  /* the secret is wiped from the scratch buffer before it is freed */
  if (k.data)
    OPENSSL_cleanse(k.data, k.len);
  hs_buf_free(&k);
  uint8_t u[HS_SHA256_LEN];
  hs_hmac_sha256(t, sizeof t, a->region, strlen(a->region), u);
  hs_hmac_sha256(u, sizeof u, a->service, strlen(a->service), t);
  hs_hmac_sha256(t, sizeof t, "aws4_request", 12, key);
}

static void scope(struct hs_buf *b, const struct hs_sigv4_auth *a)
{
  hs_buf_printf(b, "%s/%s/%s/aws4_request", a->date, a->region, a->service);
}

/* The signature of the request as the string to sign of amz_date and a's
 * scope makes it. */
static enum hs_err signature(const struct hs_sigv4_request *r,
                             const struct hs_sigv4_auth *a, const char *secret,
                             const char *amz_date, const char *payload_hash,
                             uint8_t sig[HS_SHA256_LEN])
{
  struct hs_buf canon, sts;
  hs_buf_init(&canon, 0);
  hs_buf_init(&sts, 0);
  enum hs_err err = hs_sigv4_canonical_request(r, a, payload_hash, &canon);
  if (err)
    goto out;
  uint8_t h[HS_SHA256_LEN];
  char hex[2 * HS_SHA256_LEN + 1];
  hs_sha256(canon.data, canon.len, h);
  hs_hex(h, sizeof h, hex);
  hs_buf_printf(&sts, "%s\n%s\n", HS_SIGV4_ALGORITHM, amz_date);
  scope(&sts, a);
  hs_buf_printf(&sts, "\n%s", hex);
  if (sts.failed) {
    err = HS_ERR_NOMEM;
    goto out;
  }
  uint8_t key[HS_SHA256_LEN];
  hs_sigv4_signing_key(secret, a, key);
  hs_hmac_sha256(key, sizeof key, sts.data, sts.len, sig);
  OPENSSL_cleanse(key, sizeof key);
out:
  hs_buf_free(&canon);
  hs_buf_free(&sts);
  return err;
}

enum hs_err hs_sigv4_verify(const struct hs_sigv4_request *r,
                            const struct hs_sigv4_auth *a, const char *secret,
                            const char *amz_date, const char *payload_hash)
{
  uint8_t sig[HS_SHA256_LEN];
  enum hs_err err = signature(r, a, secret, amz_date, payload_hash, sig);
  if (err)
    return err;
  return hs_mem_equal(sig, a->signature, sizeof sig) ? HS_OK
                                                     : HS_ERR_SIGNATURE;
}

enum hs_err hs_sigv4_sign(const struct hs_sigv4_request *r,
                          struct hs_sigv4_auth *a, const char *secret,
                          const char *amz_date, const char *payload_hash,
                          struct hs_buf *authorization)
{
  enum hs_err err =
      signature(r, a, secret, amz_date, payload_hash, a->signature);
  if (err)
    return err;
  char hex[2 * HS_SHA256_LEN + 1];
  hs_hex(a->signature, HS_SHA256_LEN, hex);
  hs_buf_printf(authorization, "%s Credential=%s/", HS_SIGV4_ALGORITHM,
                a->access_key);
  scope(authorization, a);
  hs_buf_printf(authorization, ", SignedHeaders=%s, Signature=%s",
                a->signed_headers, hex);
  return authorization->failed ? HS_ERR_NOMEM : HS_OK;
}

enum hs_err hs_sigv4_canonical_target(const struct hs_sigv4_request *r,
                                      struct hs_buf *out)
{
  struct hs_sigv4_auth none = {0};
  enum hs_err err = canonical_path(r, out);
  if (err)
    return err;
  if (r->query->n) {
    hs_buf_putc(out, '?');
    err = canonical_query(r, &none, out);
    if (err)
      return err;
  }
  return out->failed ? HS_ERR_NOMEM : HS_OK;
}

void hs_sigv4_chunk_signature(const uint8_t key[HS_SHA256_LEN],
                              const struct hs_sigv4_auth *a,
                              const char *amz_date,
                              const uint8_t prev[HS_SHA256_LEN],
                              const uint8_t chunk_hash[HS_SHA256_LEN],
                              uint8_t out[HS_SHA256_LEN])
{
  char prev_hex[2 * HS_SHA256_LEN + 1], chunk_hex[2 * HS_SHA256_LEN + 1];
  hs_hex(prev, HS_SHA256_LEN, prev_hex);
  hs_hex(chunk_hash, HS_SHA256_LEN, chunk_hex);
  struct hs_buf sts;
  hs_buf_init(&sts, 0);
  hs_buf_printf(&sts, "AWS4-HMAC-SHA256-PAYLOAD\n%s\n", amz_date);
  scope(&sts, a);
  hs_buf_printf(&sts, "\n%s\n%s\n%s", prev_hex, HS_EMPTY_SHA256, chunk_hex);
  hs_hmac_sha256(key, HS_SHA256_LEN, hs_buf_cstr(&sts), sts.len, out);
  hs_buf_free(&sts);
}
