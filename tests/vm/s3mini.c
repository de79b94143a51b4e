/* SPDX-License-Identifier: MIT */
#include "s3mini.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static size_t on_header(char *b, size_t sz, size_t n, void *ud)
{
  struct s3mini *r = ud;
  size_t len = sz * n;
  const char *name = "x-amz-rdma-reply:";
  size_t nl = strlen(name);
  if (len > nl && strncasecmp(b, name, nl) == 0) {
    const char *v = b + nl;
    size_t vl = len - nl;
    while (vl && (*v == ' ' || *v == '\t'))
      v++, vl--;
    while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
      vl--;
    if (vl <= sizeof r->reply) {
      memcpy(r->reply, v, vl);
      r->reply_len = vl;
    }
  } else if (len > 5 && strncasecmp(b, "etag:", 5) == 0) {
    size_t vl = len - 5;
    const char *v = b + 5;
    while (vl && isspace((unsigned char)*v))
      v++, vl--;
    while (vl && isspace((unsigned char)v[vl - 1]))
      vl--;
    if (vl < sizeof r->etag) {
      memcpy(r->etag, v, vl);
      r->etag[vl] = '\0';
    }
  }
  return len;
}

static size_t on_body(char *b, size_t sz, size_t n, void *ud)
{
  struct s3mini *r = ud;
  size_t len = sz * n;
  char *p = realloc(r->resp, r->resp_len + len + 1);
  if (!p)
    return 0;
  memcpy(p + r->resp_len, b, len);
  r->resp = p;
  r->resp_len += len;
  p[r->resp_len] = '\0';
  return len;
}

void s3mini_reset(struct s3mini *r)
{
  free(r->resp);
  r->resp = NULL;
  r->resp_len = 0;
  r->reply_len = 0;
  r->status = 0;
  r->etag[0] = '\0';
}

int s3mini_send(struct s3mini *r, const char *token)
{
  CURL *c = r->handle ? r->handle : curl_easy_init();
  if (!c)
    return -1;
  if (r->handle)
    curl_easy_reset(c); /* options gone, connection cache kept */
  char url[1024], hdr[160], range[96];
  struct curl_slist *h = NULL;
  s3mini_reset(r);
  snprintf(url, sizeof url, "%s%s", r->endpoint, r->path);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
  if (strcmp(r->method, "HEAD") == 0)
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L); /* else it waits for a body */
  if (token) {
    snprintf(hdr, sizeof hdr, "x-amz-rdma-token: %s", token);
    h = curl_slist_append(h, hdr);
  }
  if (r->range_len > 0) {
    snprintf(range, sizeof range, "Range: bytes=%ld-%ld", r->range_first,
             r->range_first + r->range_len - 1);
    h = curl_slist_append(h, range);
  }
  const char *key = getenv("S3MINI_KEY"), *secret = getenv("S3MINI_SECRET");
  if (strcmp(r->method, "PUT") == 0 || strcmp(r->method, "POST") == 0) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body ? r->body : "");
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
    /* curl 7.88 signs an emptied "Expect:" it does not send: the server
     * then misses a signed header */
    if (!key)
      h = curl_slist_append(h, "Expect:");
  }
  /* S3MINI_KEY/S3MINI_SECRET: SigV4 (the gateway wants it), the payload
   * unsigned, the token header signed with the rest */
  if (key && secret) {
    h = curl_slist_append(h, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    curl_easy_setopt(c, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
    curl_easy_setopt(c, CURLOPT_USERNAME, key);
    curl_easy_setopt(c, CURLOPT_PASSWORD, secret);
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
  if (getenv("S3MINI_VERBOSE"))
    curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
  CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
  curl_slist_free_all(h);
  if (!r->handle)
    curl_easy_cleanup(c);
  return rc == CURLE_OK ? 0 : -1;
}

static int ops_send(void *ctx, const char *token, size_t len)
{
  (void)len;
  struct s3mini *r = ctx;
  if (s3mini_send(r, token) != 0)
    return -1;
  return r->status >= 200 && r->status < 300 ? 0 : (r->reply_len ? 0 : -1);
}

static int ops_recv(void *ctx, char *reply, size_t *len)
{
  struct s3mini *r = ctx;
  if (r->reply_len == 0 || r->reply_len > *len)
    return -1; /* no header is never success */
  memcpy(reply, r->reply, r->reply_len);
  *len = r->reply_len;
  return 0;
}

const hipObjOps_t s3mini_ops = {ops_send, ops_recv};

long long s3mini_stat(const char *endpoint, const char *section, const char *key)
{
  struct s3mini r = {0};
  r.endpoint = endpoint;
  r.method = "GET";
  snprintf(r.path, sizeof r.path, "/_hipobj/stats");
  long long v = -1;
  if (s3mini_send(&r, NULL) == 0 && r.resp) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":{", section);
    const char *s = strstr(r.resp, pat);
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *k = s ? strstr(s, pat) : NULL;
    if (k)
      v = strtoll(k + strlen(pat), NULL, 10);
  }
  s3mini_reset(&r);
  return v;
}
