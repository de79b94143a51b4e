/* SPDX-License-Identifier: MIT */
/* Hexadecimal, the one implementation of the library, the test server, the
 * S3 glue and the hipobj command. Pure functions; outputs written only on
 * success. (Percent-encoding, with its upper-case digits, is not here: the
 * glue and the server each keep SigV4's URI encoding, so that the server
 * checks the glue independently.) */
#ifndef HO_COMMON_HEX_H
#define HO_COMMON_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of one hex digit (0-9, a-f, A-F), or -1. */
int ho_hex_digit(char c);

/* n bytes as 2n lower-case digits and a NUL: out holds 2n + 1 bytes. */
void ho_hex_encode(const uint8_t *p, size_t n, char *out);

/* Exactly 2n digits (either case) into n bytes. False, with out untouched,
 * for another length or any other character. */
bool ho_hex_decode(const char *s, size_t slen, uint8_t *out, size_t n);

#endif
