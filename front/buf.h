/* SPDX-License-Identifier: MIT */
/* A growable byte buffer with a hard size limit. Appends that would pass the
 * limit, or fail to allocate, mark the buffer failed; later appends do
 * nothing, so a sequence of appends is checked once at the end. The data is
 * always NUL-terminated (the NUL is not counted in len). */
#ifndef HS_BUF_H
#define HS_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct hs_buf {
  char *data;   /* NULL until the first append */
  size_t len;
  size_t cap;
  size_t limit; /* most bytes it may hold, 0: no limit */
  bool failed;
};

void hs_buf_init(struct hs_buf *b, size_t limit);
/* Frees the data; the buffer is empty and usable again. Accepts NULL. */
void hs_buf_free(struct hs_buf *b);
bool hs_buf_append(struct hs_buf *b, const void *p, size_t n);
bool hs_buf_puts(struct hs_buf *b, const char *s);
bool hs_buf_putc(struct hs_buf *b, char c);
bool hs_buf_printf(struct hs_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The contents as a C string ("" when empty); valid until the next append. */
const char *hs_buf_cstr(const struct hs_buf *b);
/* Hands the malloc()ed data (NUL-terminated) to the caller, who frees it;
 * the buffer is left empty. NULL when empty, failed or out of memory. */
char *hs_buf_take(struct hs_buf *b, size_t *len);
/* Iterates a buffer of "name" NUL "value" NUL pairs (response headers):
 * *pos starts at 0; false at the end (or if the buffer failed). */
bool hs_buf_next_pair(const struct hs_buf *b, size_t *pos, const char **name,
                      const char **value);

#endif
