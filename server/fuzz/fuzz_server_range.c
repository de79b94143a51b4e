/* SPDX-License-Identifier: MIT */
/* The Range parser: the first 8 bytes are the object size, the rest the
 * header value. Checks the result is inside the object. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "range.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  uint64_t osize = 0;
  if (size >= 8) {
    for (int i = 0; i < 8; i++)
      osize = osize << 8 | data[i];
    data += 8;
    size -= 8;
  }
  if (osize & 1)
    osize &= 0xffff; /* small objects too */
  uint64_t first = 0, count = 0;
  if (hs_range_parse((const char *)data, size, osize, &first, &count) ==
      HS_RANGE_OK) {
    if (count == 0 || first >= osize || count > osize - first)
      abort();
  }
  return 0;
}
