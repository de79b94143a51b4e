/* SPDX-License-Identifier: MIT */
/* The S3 glue's XML reader (s3err.c) on arbitrary bodies: the elements the
 * glue reads from S3 responses (error Code and Message, UploadId, the Parts
 * of ListParts with PartNumber and ETag, IsTruncated). Every output must be
 * NUL-terminated within its buffer, a span must lie inside the body, and
 * iteration must advance. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void text(const char *body, size_t len, const char *tag)
{
  char out[64];
  memset(out, 'x', sizeof out);
  if (ho_s3_xml_text(body, len, tag, out, sizeof out) &&
      !memchr(out, '\0', sizeof out))
    abort();
}

static void parts(const char *body, size_t len)
{
  size_t pos = 0, prev = 0;
  const char *p;
  size_t n;
  for (int i = 0; i < 10000 && ho_s3_xml_span(body, len, &pos, "Part", &p, &n); i++) {
    if (p < body || n > len || (size_t)(p - body) > len - n || pos <= prev ||
        pos > len)
      abort();
    prev = pos;
    text(p, n, "PartNumber");
    text(p, n, "ETag");
  }
  char out[16];
  pos = 0;
  for (int i = 0; i < 10000 && ho_s3_xml_next(body, len, &pos, "Key", out, sizeof out); i++)
    if (pos > len || !memchr(out, '\0', sizeof out))
      abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* A private copy without a terminator: the reader must respect len. */
  char *body = malloc(size ? size : 1);
  if (!body)
    return 0;
  memcpy(body, data, size);
  static const char *const tags[] = {"Code", "Message", "UploadId",
                                     "IsTruncated", "NextPartNumberMarker"};
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
    text(body, size, tags[i]);
  parts(body, size);
  free(body);
  return 0;
}
