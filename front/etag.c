/* SPDX-License-Identifier: MIT */
#include "etag.h"

#include <stdio.h>
#include <string.h>

void hs_etag_from_md5(const uint8_t md5[HS_MD5_LEN], char out[HS_ETAG_MAX])
{
  hs_hex(md5, HS_MD5_LEN, out);
}

void hs_etag_multipart(const uint8_t *md5s, size_t n, char out[HS_ETAG_MAX])
{
  uint8_t d[HS_MD5_LEN];
  hs_md5(md5s, n * HS_MD5_LEN, d);
  hs_hex(d, HS_MD5_LEN, out);
  snprintf(out + 2 * HS_MD5_LEN, HS_ETAG_MAX - 2 * HS_MD5_LEN, "-%zu", n);
}

bool hs_etag_normalize(const char *s, size_t len, char out[HS_ETAG_MAX])
{
  if (len >= 2 && s[0] == '"' && s[len - 1] == '"') {
    s++;
    len -= 2;
  }
  if (len < 32 || len > 32 + 1 + 5) /* hex, '-', at most 10000 parts */
    return false;
  char tmp[HS_ETAG_MAX];
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (i < 32) {
      if (c >= 'A' && c <= 'F')
        c = (char)(c - 'A' + 'a');
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
        return false;
    } else if (i == 32) {
      if (c != '-' || len == 33)
        return false;
    } else if (c < '0' || c > '9') {
      return false;
    }
    tmp[i] = c;
  }
  tmp[len] = '\0';
  memcpy(out, tmp, len + 1);
  return true;
}

bool hs_etag_listed(const char *list, const char *etag)
{
  const char *p = list;
  while (*p) {
    while (*p == ' ' || *p == ',')
      p++;
    if (!*p)
      break;
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    while (n && p[n - 1] == ' ')
      n--;
    if (n == 1 && *p == '*')
      return true;
    if (n > 2 && p[0] == 'W' && p[1] == '/') {
      p += 2;
      n -= 2;
    }
    char norm[HS_ETAG_MAX];
    if (hs_etag_normalize(p, n, norm) && strcmp(norm, etag) == 0)
      return true;
    p = end ? end + 1 : p + strlen(p);
  }
  return false;
}
