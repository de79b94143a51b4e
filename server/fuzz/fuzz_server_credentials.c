/* SPDX-License-Identifier: MIT */
/* The credentials file parser (--credentials): any text either fails with
 * a reason and no result, or gives at least one user and no reason. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/credentials.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct hs_credentials *c = NULL;
  struct hs_buf why;
  hs_buf_init(&why, 0);
  enum hs_err err = hs_credentials_parse((const char *)data, size, &c, &why);
  if (err == HS_OK) {
    if (!c || hs_credentials_count(c) == 0 || why.len)
      abort();
    /* store identities: a file without any shares nothing with a store
     * key of its own only if it has one user */
    bool has = hs_credentials_has_store(c);
    bool shared = hs_credentials_shared(c, "DEFAULT", &why);
    if (shared != (why.len > 0))
      abort();
    if (!has && hs_credentials_count(c) > 1 && !shared)
      abort();
    const char *k = NULL, *s = NULL;
    if (hs_credentials_store(c, "", &k, &s))
      abort(); /* no user has an empty key */
  } else if (c || !why.len) {
    if (err != HS_ERR_NOMEM)
      abort();
  }
  hs_credentials_free(c);
  hs_buf_free(&why);
  return 0;
}
