/* SPDX-License-Identifier: MIT */
/* The request target: split, path (bucket and key), query, routing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3_internal.h"
#include "uri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *t = (const char *)data;
  struct hs_span path, query;
  hs_admin_route("GET", t, size);
  if (!hs_target_split(t, size, &path, &query))
    return 0;
  char bucket[HS_BUCKET_MAX + 1], key[HS_KEY_MAX + 1];
  size_t klen = 0;
  if (hs_path_parse(path.p, path.len, bucket, key, &klen) == HS_OK) {
    if (strlen(key) != klen || klen > HS_KEY_MAX || !hs_utf8_valid(key, klen))
      abort();
    hs_bucket_name_valid(bucket);
  }
  struct hs_query q;
  if (hs_query_parse(query.p, query.len, &q) == HS_OK) {
    static const char *const methods[] = {"GET", "HEAD", "PUT", "POST",
                                          "DELETE", "PATCH"};
    for (size_t i = 0; i < 6; i++)
      hs_s3_route(methods[i], bucket[0], klen > 0, &q, size & 1);
    struct hs_buf b;
    hs_buf_init(&b, 0);
    for (size_t i = 0; i < q.n; i++)
      hs_uri_encode(&b, q.p[i].value, strlen(q.p[i].value), true);
    hs_buf_free(&b);
    hs_query_free(&q);
  }
  return 0;
}
