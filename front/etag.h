/* SPDX-License-Identifier: MIT */
/* ETags as S3 computes them: the hex MD5 of the content, or for a multipart
 * object the hex MD5 of the concatenated binary part MD5s followed by "-N".
 * Stored and compared without the surrounding quotes. */
#ifndef HS_ETAG_H
#define HS_ETAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hash.h"

/* 32 hex digits, '-', up to 5 digits, NUL */
#define HS_ETAG_MAX 40

void hs_etag_from_md5(const uint8_t md5[HS_MD5_LEN], char out[HS_ETAG_MAX]);
/* md5s: n part MD5s, 16 bytes each, in part order. */
void hs_etag_multipart(const uint8_t *md5s, size_t n, char out[HS_ETAG_MAX]);
/* An ETag from a client: optional surrounding quotes (also &quot; already
 * decoded), 32 hex digits, optionally "-N". Written lower-case without
 * quotes. False if it has another form. */
bool hs_etag_normalize(const char *s, size_t len, char out[HS_ETAG_MAX]);

/* Whether an If-Match / If-None-Match list (ETags with or without quotes
 * or W/, separated by commas; "*" names any) names etag. */
bool hs_etag_listed(const char *list, const char *etag);

#endif
