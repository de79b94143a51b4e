/* SPDX-License-Identifier: MIT */
/* The ListObjects rules, apart from the store and the XML: given keys in
 * order, which go into the page as Contents, which are rolled up into
 * CommonPrefixes, and whether the page is truncated. Pure. */
#ifndef HS_LISTER_H
#define HS_LISTER_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "store.h"

struct hs_list_item {
  char *key;      /* a key, or a common prefix */
  bool is_prefix;
  uint64_t size;
  char etag[HS_ETAG_MAX];
  int64_t mtime;
};

struct hs_lister {
  const char *prefix;
  size_t plen;
  const char *delim; /* NULL or "" for none */
  size_t dlen;
  const char *after; /* keys and prefixes up to this one are skipped */
  size_t max;
  struct hs_list_item *items; /* in key order */
  size_t n;
  bool truncated;
  enum hs_err err;
};

/* The strings must outlive the lister. max 0 lists nothing and is never
 * truncated. */
void hs_lister_init(struct hs_lister *l, const char *prefix, const char *delim,
                    const char *after, size_t max);
/* Where the store should start: *from and whether it is inclusive. */
void hs_lister_start(const struct hs_lister *l, const char **from,
                     bool *inclusive);
/* An hs_list_fn: false when the page is complete (or on error). */
bool hs_lister_add(void *ctx, const char *key, const struct hs_obj_info *info);
/* The last item's key or prefix (the next page's marker), or NULL. */
const char *hs_lister_last(const struct hs_lister *l);
void hs_lister_free(struct hs_lister *l);

#endif
