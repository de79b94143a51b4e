/* SPDX-License-Identifier: MIT */
#include "common/hex.h"

int ho_hex_digit(char c)
{
  unsigned u = (unsigned char)c;
  if (u - '0' < 10)
    return (int)(u - '0');
  u |= 0x20; /* 'A'..'F' to 'a'..'f'; nothing else lands there */
  if (u - 'a' < 6)
    return (int)(u - 'a' + 10);
  return -1;
}

void ho_hex_encode(const uint8_t *p, size_t n, char *out)
{
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  out[2 * n] = '\0';
}

bool ho_hex_decode(const char *s, size_t slen, uint8_t *out, size_t n)
{
  if (!s || slen / 2 != n || slen % 2 != 0)
    return false;
  for (size_t i = 0; i < slen; i++)
    if (ho_hex_digit(s[i]) < 0)
      return false;
  for (size_t i = 0; i < n; i++)
    out[i] = (uint8_t)(ho_hex_digit(s[2 * i]) << 4 | ho_hex_digit(s[2 * i + 1]));
  return true;
}
