/* SPDX-License-Identifier: MIT */
/* The credentials file parser (--credentials): any text either fails with
 * a reason and no result, or gives at least one user and no reason. */
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
  } else if (c || !why.len) {
    if (err != HS_ERR_NOMEM)
      abort();
  }
  hs_credentials_free(c);
  hs_buf_free(&why);
  return 0;
}
