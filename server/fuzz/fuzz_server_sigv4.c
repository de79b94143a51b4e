/* SPDX-License-Identifier: MIT */
/* SigV4: the Authorization header, the presigned query, and the canonical
 * request and verification over what parses. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/sigv4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *s = (const char *)data;
  struct hs_sigv4_auth a;
  struct hs_query q = {.n = 0};
  bool ok = hs_sigv4_parse_header(s, size, &a) == HS_OK;
  if (!ok && hs_query_parse(s, size, &q) == HS_OK)
    ok = hs_sigv4_parse_query(&q, &a) == HS_OK;
  if (ok) {
    struct hs_query empty = {.n = 0};
    struct hs_kv kv[] = {{"Host", "h"}, {"x-amz-date", "20130524T000000Z"},
                         {"Range", " a   b "}, {"x-amz-content-sha256", "x"}};
    struct hs_headers h = {kv, 4};
    struct hs_sigv4_request r = {"GET", {"/b/k%20", 7}, q.n ? &q : &empty,
                                 &h};
    hs_sigv4_verify(&r, &a, "secret", "20130524T000000Z", "UNSIGNED-PAYLOAD");
  }
  hs_query_free(&q);
  char t[32];
  size_t n = size < sizeof t - 1 ? size : sizeof t - 1;
  memcpy(t, s, n);
  t[n] = '\0';
  int64_t when;
  hs_sigv4_parse_time(t, &when);
  return 0;
}
