/* SPDX-License-Identifier: MIT */
/* Sizes and counts as people type them, one rule for the test server's
 * options, the hipobj command's options and the library's environment.
 * Pure functions; *out written only on success. */
#ifndef HO_COMMON_SIZE_H
#define HO_COMMON_SIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A size in bytes: decimal digits, then optionally a unit K, M, G or T,
 * which may be followed by "i" and then by "B" (letters in either case).
 * Every unit is a power of 1024: "64K", "64Ki" and "64KiB" are 65536,
 * "5M" and "5MB" are 5242880. No sign, no space, no fraction, nothing after
 * the unit, nothing over UINT64_MAX. */
bool ho_parse_size(const char *s, uint64_t *out);

/* A count: decimal digits only (no sign, no space, no unit), at most max. */
bool ho_parse_uint(const char *s, uint64_t max, uint64_t *out);

/* The same over exactly len bytes (not NUL-terminated: a header's value,
 * a part of a reply): 1 to 20 decimal digits, at most UINT64_MAX. */
bool ho_parse_uint_n(const char *s, size_t len, uint64_t *out);

#endif
