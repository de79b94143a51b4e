/* SPDX-License-Identifier: MIT */
/* NIC and GID selection: pure functions, no I/O. */
#include "rdma/select.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- bus ids ---------------------------------------------------------- */

/* Room for any bus id worth comparing; longer input is cut here, which only
 * matters for strings that are not bus ids anyway. */
#define BUS_NORM_MAX 64

static char lower_ascii(char c)
{
  return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static size_t count_char(const char *s, char c)
{
  size_t n = 0;
  for (; *s; s++)
    n += *s == c;
  return n;
}

/* The comparable form of a bus id: lower case, without the PCI function
 * (".N"), with a domain of 4 digits where it has leading zeros beyond that
 * ("00000000:1b:00.0", as some tools print it, becomes "0000:1b:00") and
 * with domain 0000 added where it is missing ("c1:00.0"). */
static void normalize_bus_id(const char *in, char out[BUS_NORM_MAX])
{
  size_t o = 0;
  if (count_char(in, ':') == 1) {
    memcpy(out, "0000:", 5);
    o = 5;
  } else {
    const char *colon = strchr(in, ':');
    while (colon && colon - in > 4 && in[0] == '0')
      in++;
  }
  for (; *in && o + 1 < BUS_NORM_MAX; in++)
    out[o++] = lower_ascii(*in);
  out[o] = '\0';
  char *dot = strrchr(out, '.');
  char *colon = strrchr(out, ':');
  if (dot && (!colon || dot > colon))
    *dot = '\0';
}

size_t ho_bus_id_distance(const char *a, const char *b)
{
  if (!a || !b || !a[0] || !b[0])
    return SIZE_MAX;
  char na[BUS_NORM_MAX];
  char nb[BUS_NORM_MAX];
  normalize_bus_id(a, na);
  normalize_bus_id(b, nb);
  size_t p = 0;
  while (na[p] && na[p] == nb[p])
    p++;
  size_t la = strlen(na);
  size_t lb = strlen(nb);
  return (la > lb ? la : lb) - p;
}

/* ---- the allow-list ----------------------------------------------------- */

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool ho_name_list_next(const char *list, size_t *pos, const char **name,
                       size_t *len)
{
  size_t i = *pos;
  while (list[i]) {
    while (is_blank(list[i]))
      i++;
    size_t start = i;
    while (list[i] && list[i] != ',')
      i++;
    size_t end = i;
    while (end > start && is_blank(list[end - 1]))
      end--;
    if (list[i] == ',')
      i++;
    if (end > start) {
      *pos = i;
      *name = list + start;
      *len = end - start;
      return true;
    }
  }
  *pos = i;
  return false;
}

static bool hint_allows(const char *hint, const char *nic)
{
  if (!hint || !hint[0])
    return true;
  size_t pos = 0;
  const char *name;
  size_t len;
  while (ho_name_list_next(hint, &pos, &name, &len))
    if (strlen(nic) == len && memcmp(nic, name, len) == 0)
      return true;
  return false;
}

static bool is_candidate(const struct ho_nic_info *nic, const char *hint)
{
  return nic->active_port != 0 && nic->name[0] &&
         memchr(nic->name, '\0', sizeof nic->name) &&
         hint_allows(hint, nic->name);
}

/* ---- NIC ---------------------------------------------------------------- */

static bool copy_name(const char *name, size_t len, char out[HO_NIC_NAME_MAX])
{
  if (len == 0 || len >= HO_NIC_NAME_MAX)
    return false;
  memcpy(out, name, len);
  out[len] = '\0';
  return true;
}

/* The index of the closest candidate with a known bus id, or n. */
static size_t closest_nic(const struct ho_nic_info *nics, size_t n,
                          const char *gpu_bus_id, const char *hint)
{
  size_t best = n;
  size_t best_d = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    const struct ho_nic_info *nic = &nics[i];
    if (!is_candidate(nic, hint) || !memchr(nic->bus_id, '\0', HO_BUS_ID_MAX))
      continue;
    size_t d = ho_bus_id_distance(gpu_bus_id, nic->bus_id);
    if (d != SIZE_MAX && (best == n || d < best_d)) {
      best = i;
      best_d = d;
    }
  }
  return best;
}

hipObjOpError_t ho_select_nic(const struct ho_nic_info *nics, size_t n,
                              const char *gpu_bus_id, const char *hint,
                              char out[HO_NIC_NAME_MAX])
{
  if (!out || (!nics && n))
    return hipObjInvalidValue;
  if (gpu_bus_id && gpu_bus_id[0]) {
    size_t i = closest_nic(nics, n, gpu_bus_id, hint);
    if (i < n && copy_name(nics[i].name, strlen(nics[i].name), out))
      return hipObjSuccess;
  }
  if (hint) {
    size_t pos = 0;
    const char *name;
    size_t len;
    if (ho_name_list_next(hint, &pos, &name, &len) && copy_name(name, len, out))
      return hipObjSuccess;
  }
  return hipObjNicNotFound;
}

/* ---- GID ---------------------------------------------------------------- */

enum { RANK_NONE = -1 };

static bool gid_is_zero(const uint8_t g[16])
{
  for (int i = 0; i < 16; i++)
    if (g[i])
      return false;
  return true;
}

/* ::ffff:a.b.c.d */
static bool gid_is_v4_mapped(const uint8_t g[16])
{
  for (int i = 0; i < 10; i++)
    if (g[i])
      return false;
  return g[10] == 0xff && g[11] == 0xff;
}

/* fe80::/10 */
static bool gid_is_link_local(const uint8_t g[16])
{
  return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

/* 0 is best. RoCE v2: IPv4-mapped 0, global 1, link-local 2. RoCE v1:
 * global (IPv4-mapped included) 3, link-local 4. InfiniBand GIDs (an IB
 * port, where no RoCE version applies) come last: global 5, link-local 6.
 * Unknown types and all-zero (unconfigured) GIDs are no candidates. */
static int gid_rank(const struct ho_gid_entry *e)
{
  if (e->index < 0 || gid_is_zero(e->raw))
    return RANK_NONE;
  bool ll = gid_is_link_local(e->raw);
  switch (e->type) {
  case HO_GID_ROCE_V2:
    return gid_is_v4_mapped(e->raw) ? 0 : ll ? 2 : 1;
  case HO_GID_ROCE_V1:
    return ll ? 4 : 3;
  case HO_GID_IB:
    return ll ? 6 : 5;
  case HO_GID_UNKNOWN:
  default:
    return RANK_NONE;
  }
}

int ho_select_gid(const struct ho_gid_entry *e, size_t n)
{
  if (!e)
    return 0;
  int best_rank = RANK_NONE;
  int best_index = 0;
  for (size_t i = 0; i < n; i++) {
    int r = gid_rank(&e[i]);
    if (r == RANK_NONE)
      continue;
    if (best_rank == RANK_NONE || r < best_rank ||
        (r == best_rank && e[i].index < best_index)) {
      best_rank = r;
      best_index = e[i].index;
    }
  }
  return best_index;
}
