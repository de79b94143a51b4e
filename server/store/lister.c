/* SPDX-License-Identifier: MIT */
#include "lister.h"

#include <stdlib.h>
#include <string.h>

void hs_lister_init(struct hs_lister *l, const char *prefix, const char *delim,
                    const char *after, size_t max)
{
  memset(l, 0, sizeof *l);
  l->prefix = prefix ? prefix : "";
  l->plen = strlen(l->prefix);
  l->delim = delim && *delim ? delim : NULL;
  l->dlen = l->delim ? strlen(l->delim) : 0;
  l->after = after ? after : "";
  l->max = max;
}

void hs_lister_start(const struct hs_lister *l, const char **from,
                     bool *inclusive)
{
  if (strcmp(l->prefix, l->after) > 0) {
    *from = l->prefix;
    *inclusive = true;
  } else {
    *from = l->after;
    *inclusive = false;
  }
}

static bool push(struct hs_lister *l, const char *key, size_t klen,
                 bool is_prefix, const struct hs_obj_info *info)
{
  if (l->n == l->max) {
    l->truncated = true;
    return false;
  }
  struct hs_list_item *items =
      realloc(l->items, (l->n + 1) * sizeof *l->items);
  char *k = malloc(klen + 1);
  if (items)
    l->items = items;
  if (!items || !k) {
    free(k);
    l->err = HS_ERR_NOMEM;
    return false;
  }
  memcpy(k, key, klen);
  k[klen] = '\0';
  struct hs_list_item *it = &l->items[l->n++];
  memset(it, 0, sizeof *it);
  it->key = k;
  it->is_prefix = is_prefix;
  if (!is_prefix) {
    it->size = info->size;
    it->mtime = info->mtime;
    memcpy(it->etag, info->etag, sizeof it->etag);
  }
  return true;
}

const char *hs_lister_last(const struct hs_lister *l)
{
  return l->n ? l->items[l->n - 1].key : NULL;
}

/* Compares [p, p+n) with the C string s as strcmp would. */
static int cmp_n(const char *p, size_t n, const char *s)
{
  size_t sl = strlen(s);
  int c = memcmp(p, s, n < sl ? n : sl);
  if (c)
    return c;
  return n < sl ? -1 : n > sl ? 1 : 0;
}

bool hs_lister_add(void *ctx, const char *key, const struct hs_obj_info *info)
{
  struct hs_lister *l = ctx;
  if (l->max == 0)
    return false;
  int c = strncmp(key, l->prefix, l->plen);
  if (c < 0)
    return true;
  if (c > 0)
    return false; /* past every key with the prefix */
  if (strcmp(key, l->after) <= 0)
    return true;
  if (l->delim) {
    const char *d = strstr(key + l->plen, l->delim);
    if (d) {
      size_t cl = (size_t)(d - key) + l->dlen;
      const char *last = hs_lister_last(l);
      bool last_is_prefix = l->n && l->items[l->n - 1].is_prefix;
      if (last_is_prefix && cmp_n(key, cl, last) == 0)
        return true; /* rolled up already */
      if (cmp_n(key, cl, l->after) <= 0)
        return true; /* rolled up on an earlier page */
      return push(l, key, cl, true, NULL);
    }
  }
  return push(l, key, strlen(key), false, info);
}

void hs_lister_free(struct hs_lister *l)
{
  for (size_t i = 0; i < l->n; i++)
    free(l->items[i].key);
  free(l->items);
  l->items = NULL;
  l->n = 0;
}
