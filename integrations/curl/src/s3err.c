/* SPDX-License-Identifier: MIT */
/* S3 answers for people: the error body's <Code> and <Message> turned into
 * one line that says what went wrong and what to do about it. Everything
 * taken from the wire is bounded and stripped of control characters. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---- XML ---------------------------------------------------------------- */

static const char *find(const char *hay, size_t len, const char *needle)
{
  size_t n = strlen(needle);
  if (n == 0 || n > len)
    return NULL;
  for (size_t i = 0; i + n <= len; i++)
    if (hay[i] == needle[0] && memcmp(hay + i, needle, n) == 0)
      return hay + i;
  return NULL;
}

/* One entity at s (after '&'): its character and length, or 0. */
static size_t entity(const char *s, size_t len, char *out)
{
  static const struct {
    const char *name;
    char ch;
  } ents[] = {{"lt;", '<'}, {"gt;", '>'}, {"amp;", '&'},
              {"quot;", '"'}, {"apos;", '\''}};
  for (size_t i = 0; i < sizeof ents / sizeof ents[0]; i++) {
    size_t n = strlen(ents[i].name);
    if (n <= len && memcmp(s, ents[i].name, n) == 0) {
      *out = ents[i].ch;
      return n;
    }
  }
  return 0;
}

/* Copies XML text, entities decoded, control characters as blanks. */
static bool xml_copy(const char *s, size_t len, char *out, size_t cap)
{
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    char ch = s[i];
    if (ch == '&') {
      size_t n = entity(s + i + 1, len - i - 1, &ch);
      i += n;
      if (n == 0)
        ch = '&';
    }
    if ((unsigned char)ch < 0x20 || ch == 0x7f)
      ch = ' ';
    if (o + 1 >= cap)
      return false;
    out[o++] = ch;
  }
  out[o] = '\0';
  return true;
}

bool ho_s3_xml_span(const char *body, size_t len, size_t *pos,
                    const char *tag, const char **text, size_t *text_len)
{
  char open[80], close[80];
  if (!body || !pos || *pos > len)
    return false;
  int a = snprintf(open, sizeof open, "<%s>", tag);
  int b = snprintf(close, sizeof close, "</%s>", tag);
  if (a <= 0 || b <= 0 || (size_t)a >= sizeof open || (size_t)b >= sizeof close)
    return false;
  const char *start = find(body + *pos, len - *pos, open);
  if (!start)
    return false;
  start += a;
  size_t rest = len - (size_t)(start - body);
  const char *end = find(start, rest, close);
  if (!end)
    return false;
  *text = start;
  *text_len = (size_t)(end - start);
  *pos = (size_t)(end - body) + (size_t)b;
  return true;
}

bool ho_s3_xml_next(const char *body, size_t len, size_t *pos,
                    const char *tag, char *out, size_t cap)
{
  const char *text;
  size_t n;
  size_t p = pos ? *pos : 0;
  if (!pos || !cap || !ho_s3_xml_span(body, len, &p, tag, &text, &n))
    return false;
  if (!xml_copy(text, n, out, cap))
    return false;
  *pos = p;
  return true;
}

bool ho_s3_xml_text(const char *body, size_t len, const char *tag, char *out,
                    size_t cap)
{
  size_t pos = 0;
  return ho_s3_xml_next(body, len, &pos, tag, out, cap);
}

/* ---- messages ----------------------------------------------------------- */

void ho_s3_result_clear(hipObjS3Result_t *res)
{
  memset(res, 0, sizeof *res);
}

hipObjS3Status_t ho_s3_fail(hipObjS3Result_t *res, hipObjS3Status_t st,
                            const char *fmt, ...)
{
  res->status = st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->message, sizeof res->message, fmt, ap);
  va_end(ap);
  return st;
}

/* "s3://bucket/key" or "s3://bucket", bounded. */
static void where(const struct ho_s3_target *t, char *out, size_t cap)
{
  snprintf(out, cap, "s3://%.*s%s%.*s", 255, t->bucket ? t->bucket : "",
           (t->key && t->key[0]) ? "/" : "", 300,
           (t->key && t->key[0]) ? t->key : "");
  for (char *p = out; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      *p = '?';
}

/* The code a status implies when the body has none (HEAD). */
static const char *code_of_status(long status)
{
  switch (status) {
  case 400: return "BadRequest";
  case 403: return "Forbidden";
  case 404: return "NotFound";
  case 405: return "MethodNotAllowed";
  case 416: return "InvalidRange";
  case 501: return "NotImplemented";
  case 503: return "ServiceUnavailable";
  default: return "";
  }
}

static hipObjS3Status_t auth_failure(const struct ho_s3_settings *s,
                                     const char *code, const char *what,
                                     hipObjS3Result_t *res)
{
  hipObjS3Status_t st = hipObjS3AccessDenied;
  if (!s->sign)
    return ho_s3_fail(res, st, "access to %s denied (%s): the server wants "
                      "signed requests; set AWS_ACCESS_KEY_ID and "
                      "AWS_SECRET_ACCESS_KEY", what, code);
  if (!strcmp(code, "InvalidAccessKeyId"))
    return ho_s3_fail(res, st, "the server does not know this access key "
                      "(%s): check AWS_ACCESS_KEY_ID", code);
  if (!strcmp(code, "SignatureDoesNotMatch"))
    return ho_s3_fail(res, st, "the request signature was rejected (%s): "
                      "check AWS_SECRET_ACCESS_KEY, and the region (signing "
                      "for %s)", code, s->region);
  if (!strcmp(code, "RequestTimeTooSkewed"))
    return ho_s3_fail(res, st, "this machine's clock differs too much from "
                      "the server's (%s): correct the system time", code);
  if (!strcmp(code, "ExpiredToken") || !strcmp(code, "InvalidToken"))
    return ho_s3_fail(res, st, "the session token was rejected (%s): renew "
                      "AWS_SESSION_TOKEN", code);
  return ho_s3_fail(res, st, "access to %s denied (%s): check the "
                    "credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) "
                    "and their permissions", what, code[0] ? code : "403");
}

static hipObjS3Status_t not_found(const struct ho_s3_settings *s,
                                  const struct ho_s3_target *t,
                                  const char *code, const char *what,
                                  hipObjS3Result_t *res)
{
  if (!strcmp(code, "NoSuchBucket"))
    return ho_s3_fail(res, hipObjS3NoSuchBucket, "bucket '%.255s' does not "
                      "exist at %s (NoSuchBucket): create it, or check the "
                      "bucket name and the endpoint", t->bucket, s->endpoint);
  if (!strcmp(code, "NoSuchKey") || !strcmp(code, "NotFound"))
    return ho_s3_fail(res, hipObjS3NoSuchKey, "%s does not exist (%s): "
                      "check the key", what, code);
  if (!strcmp(code, "NoSuchUpload"))
    return ho_s3_fail(res, hipObjS3HttpError, "the multipart upload of %s "
                      "is gone (NoSuchUpload): start the upload again", what);
  return ho_s3_fail(res, hipObjS3HttpError, "%s: not found (%s)", what,
                    code);
}

hipObjS3Status_t ho_s3_http_failure(const struct ho_s3_settings *s,
                                    const struct ho_s3_target *t, long status,
                                    const char *body, size_t body_len,
                                    hipObjS3Result_t *res)
{
  char code[64], msg[200], what[600];
  if (!ho_s3_xml_text(body, body_len, "Code", code, sizeof code))
    snprintf(code, sizeof code, "%s", code_of_status(status));
  if (!ho_s3_xml_text(body, body_len, "Message", msg, sizeof msg))
    msg[0] = '\0';
  where(t, what, sizeof what);
  res->httpStatus = status;
  snprintf(res->s3Code, sizeof res->s3Code, "%s", code);
  if (status == 403 || !strcmp(code, "InvalidAccessKeyId") ||
      !strcmp(code, "SignatureDoesNotMatch"))
    return auth_failure(s, code, what, res);
  if (status == 404)
    return not_found(s, t, code, what, res);
  if (status == 416 || !strcmp(code, "InvalidRange"))
    return ho_s3_fail(res, hipObjS3InvalidRange, "the range asked for lies "
                      "outside %s (InvalidRange)", what);
  if (!strcmp(code, "AuthorizationHeaderMalformed"))
    return ho_s3_fail(res, hipObjS3AccessDenied, "the server rejected the "
                      "request's Authorization header (%s%s%s): check the "
                      "region (signing for %s; --region or AWS_REGION)", code,
                      msg[0] ? ": " : "", msg, s->region);
  if (status == 301 || !strcmp(code, "PermanentRedirect"))
    return ho_s3_fail(res, hipObjS3HttpError, "the bucket is served from "
                      "another endpoint or region (HTTP %ld %s): set the "
                      "bucket's region (--region, AWS_REGION) or its "
                      "endpoint", status, code);
  if (!strcmp(code, "EntityTooSmall"))
    return ho_s3_fail(res, hipObjS3HttpError, "the server refused a part as "
                      "too small (EntityTooSmall): raise the part size (S3's "
                      "smallest part is 5 MiB)");
  if (!strcmp(code, "EntityTooLarge"))
    return ho_s3_fail(res, hipObjS3HttpError, "the server refused the "
                      "object or part as too large (EntityTooLarge): lower "
                      "the part size");
  if (status == 503 || !strcmp(code, "SlowDown"))
    return ho_s3_fail(res, hipObjS3HttpError, "the server is busy (HTTP 503 "
                      "%s): retry later, or with less concurrency", code);
  return ho_s3_fail(res, hipObjS3HttpError, "%s %s failed: HTTP %ld%s%s%s%s",
                    t->op, what, status, code[0] ? " " : "", code,
                    msg[0] ? ": " : "", msg);
}

hipObjS3Status_t ho_s3_curl_failure(const struct ho_s3_settings *s,
                                    CURLcode cc, const char *detail,
                                    hipObjS3Result_t *res)
{
  const char *d = (detail && detail[0]) ? detail : curl_easy_strerror(cc);
  switch (cc) {
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_PEER_FAILED_VERIFICATION:
    return ho_s3_fail(res, hipObjS3ConnectFailed, "cannot reach %s (%s): is "
                      "the server running? check --endpoint or "
                      "AWS_ENDPOINT_URL", s->endpoint, d);
  case CURLE_OUT_OF_MEMORY:
    return ho_s3_fail(res, hipObjS3OutOfMemory, "out of memory");
  default:
    return ho_s3_fail(res, hipObjS3HttpError, "the exchange with %s failed "
                      "(%s)", s->endpoint, d);
  }
}
