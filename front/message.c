/* SPDX-License-Identifier: MIT */
#include "message.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void hs_resp_header(struct hs_response *r, const char *name, const char *value)
{
  hs_buf_append(&r->headers, name, strlen(name) + 1);
  hs_buf_append(&r->headers, value, strlen(value) + 1);
}

void hs_resp_headerf(struct hs_response *r, const char *name, const char *fmt,
                     ...)
{
  char v[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(v, sizeof v, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof v)
    hs_resp_header(r, name, v);
  else
    r->headers.failed = true;
}

bool hs_resp_next_header(const struct hs_response *r, size_t *pos,
                         const char **name, const char **value)
{
  return hs_buf_next_pair(&r->headers, pos, name, value);
}

void hs_resp_free(struct hs_response *r)
{
  hs_buf_free(&r->headers);
  hs_buf_free(&r->body);
  if (r->source.close)
    r->source.close(r->source.ctx);
  memset(&r->source, 0, sizeof r->source);
}

void hs_resp_reset(struct hs_response *r, const char *request_id)
{
  hs_resp_free(r);
  r->status = 200;
  r->head = false;
  r->head_length = 0;
  r->length = 0;
  if (request_id)
    hs_resp_header(r, "x-amz-request-id", request_id);
}

void hs_resp_error(struct hs_response *r, enum hs_err err,
                   const char *message, const struct hs_err_where *w,
                   bool head)
{
  hs_resp_reset(r, w->request_id);
  r->status = hs_err_status(err);
  if (r->status == 304 || head)
    return; /* no body */
  hs_resp_header(r, "Content-Type", "application/xml");
  hs_err_xml(&r->body, err, message, w);
}
