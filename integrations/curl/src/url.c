/* SPDX-License-Identifier: MIT */
/* URLs: s3://BUCKET/KEY from users, ENDPOINT/BUCKET/KEY?QUERY on the wire.
 * Keys are percent-encoded exactly as SigV4's canonical URI has them, so
 * the path curl signs is the path the server canonicalises. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

static bool unreserved(unsigned char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

bool ho_s3_uri_encode(const char *in, size_t len, bool keep_slash, char *out,
                      size_t cap)
{
  static const char hex[] = "0123456789ABCDEF";
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)in[i];
    if (unreserved(c) || (keep_slash && c == '/')) {
      if (cap - o < 2)
        return false;
      out[o++] = (char)c;
      continue;
    }
    if (cap - o < 4)
      return false;
    out[o++] = '%';
    out[o++] = hex[c >> 4];
    out[o++] = hex[c & 15];
  }
  if (cap - o < 1)
    return false;
  out[o] = '\0';
  return true;
}

/* S3's bucket names are 3..63 of [a-z0-9.-]; servers of the S3 API accept
 * a little more, so only what cannot be a path segment is refused here. */
bool ho_s3_bucket_ok(const char *bucket)
{
  size_t n = bucket ? strnlen(bucket, HO_S3_BUCKET_MAX + 1) : 0;
  if (n == 0 || n > HO_S3_BUCKET_MAX)
    return false;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)bucket[i];
    if (c == '/' || c < 0x21 || c == 0x7f || c == '?' || c == '#')
      return false;
  }
  return strcmp(bucket, ".") != 0 && strcmp(bucket, "..") != 0;
}

bool ho_s3_key_ok(const char *key)
{
  size_t n = key ? strnlen(key, HO_S3_OBJKEY_MAX + 1) : 0;
  return n > 0 && n <= HO_S3_OBJKEY_MAX;
}

bool ho_s3_object_url(const struct ho_s3_settings *s, const char *bucket,
                      const char *key, const char *query, char *out,
                      size_t cap)
{
  char ebucket[HO_S3_BUCKET_MAX * 3 + 1];
  char ekey[HO_S3_OBJKEY_MAX * 3 + 1];
  if (!ho_s3_uri_encode(bucket, strlen(bucket), false, ebucket,
                        sizeof ebucket))
    return false;
  ekey[0] = '\0';
  if (key && !ho_s3_uri_encode(key, strlen(key), true, ekey, sizeof ekey))
    return false;
  int n = snprintf(out, cap, "%s/%s%s%s%s%s", s->endpoint, ebucket,
                   key ? "/" : "", ekey, query ? "?" : "", query ? query : "");
  return n > 0 && (size_t)n < cap;
}

hipObjS3Status_t hipObjS3ParseUrl(const char *url, char *bucket,
                                  size_t bucketLen, char *key, size_t keyLen)
{
  if (!url || !bucket || !key || !bucketLen || !keyLen)
    return hipObjS3InvalidArgument;
  if (strncasecmp(url, "s3://", 5) != 0)
    return hipObjS3InvalidArgument;
  const char *b = url + 5;
  const char *slash = strchr(b, '/');
  size_t blen = slash ? (size_t)(slash - b) : strlen(b);
  const char *k = slash ? slash + 1 : "";
  size_t klen = strlen(k);
  char tmp[HO_S3_BUCKET_MAX + 1];
  if (blen == 0 || blen >= bucketLen || blen >= sizeof tmp || klen >= keyLen)
    return hipObjS3InvalidArgument;
  memcpy(tmp, b, blen);
  tmp[blen] = '\0';
  if (!ho_s3_bucket_ok(tmp))
    return hipObjS3InvalidArgument;
  memcpy(bucket, tmp, blen + 1);
  memcpy(key, k, klen);
  key[klen] = '\0';
  return hipObjS3Ok;
}
