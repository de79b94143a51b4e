/* SPDX-License-Identifier: MIT */
/* Little-endian fields of wire formats, written and read byte by byte (never
 * by copying a struct), whatever the host's byte order. */
#ifndef HO_COMMON_LE_H
#define HO_COMMON_LE_H

#include <stdint.h>

static inline void ho_put_le(uint8_t *p, uint64_t v, int n)
{
  for (int i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t ho_get_le(const uint8_t *p, int n)
{
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

#endif
