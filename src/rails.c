/* SPDX-License-Identifier: MIT */
/* The rails policy (rails.h): pure, no I/O. */
#include "rails.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rdma/select.h"

/* ---- path classes -------------------------------------------------------- */

/* The n-th '/'-separated component of path: its start and length. */
static size_t components(const char *path, const char **start, size_t *len,
                         size_t cap)
{
  size_t n = 0;
  for (const char *c = path; *c && n < cap;) {
    const char *end = strchr(c, '/');
    size_t l = end ? (size_t)(end - c) : strlen(c);
    start[n] = c;
    len[n] = l;
    n++;
    if (!end)
      break;
    c = end + 1;
  }
  return n;
}

#define MAX_DEPTH 32

enum ho_path_class ho_path_class(const char *a, int a_numa, const char *b,
                                 int b_numa)
{
  if (!a || !b || !a[0] || !b[0])
    return HO_PATH_UNKNOWN;
  const char *as[MAX_DEPTH], *bs[MAX_DEPTH];
  size_t al[MAX_DEPTH], bl[MAX_DEPTH];
  size_t na = components(a, as, al, MAX_DEPTH);
  size_t nb = components(b, bs, bl, MAX_DEPTH);
  size_t common = 0;
  while (common < na && common < nb && al[common] == bl[common] &&
         memcmp(as[common], bs[common], al[common]) == 0)
    common++;
  if (common == 0) /* different host bridges */
    return a_numa >= 0 && a_numa == b_numa ? HO_PATH_NUMA : HO_PATH_OTHER;
  if (common == 1) /* different root ports of one host bridge */
    return HO_PATH_ROOT_PORT;
  /* Below a shared bridge: a switch's upstream port, whose downstream
   * ports each lead to one device (or a device's functions). */
  return na - common <= 2 && nb - common <= 2 ? HO_PATH_SWITCH
                                              : HO_PATH_SWITCHES;
}

const char *ho_path_class_name(enum ho_path_class c)
{
  switch (c) {
  case HO_PATH_SWITCH:
    return "same switch";
  case HO_PATH_SWITCHES:
    return "switches";
  case HO_PATH_ROOT_PORT:
    return "root port";
  case HO_PATH_NUMA:
    return "NUMA node";
  case HO_PATH_OTHER:
    return "other";
  case HO_PATH_UNKNOWN:
  default:
    return "unknown";
  }
}

/* ---- helpers ------------------------------------------------------------- */

static bool terminated(const char *s, size_t cap) { return memchr(s, 0, cap); }

static bool usable(const struct ho_nic_info *nic)
{
  return nic->active_port != 0 && nic->name[0] &&
         terminated(nic->name, sizeof nic->name) &&
         terminated(nic->bus_id, sizeof nic->bus_id) &&
         terminated(nic->pci_path, sizeof nic->pci_path);
}

static const struct ho_nic_info *find(const struct ho_rails_in *in,
                                      const char *name, size_t len)
{
  for (size_t i = 0; i < in->n; i++)
    if (strlen(in->nics[i].name) == len &&
        memcmp(in->nics[i].name, name, len) == 0 && usable(&in->nics[i]))
      return &in->nics[i];
  return NULL;
}

/* The class of a NIC as seen from the memory that moves: from the GPU, or
 * (host memory) NUMA node or other by the CPU's node. */
static enum ho_path_class class_of(const struct ho_rails_in *in,
                                   const struct ho_nic_info *nic)
{
  if (in->gpu)
    return ho_path_class(in->gpu->pci_path, in->gpu->numa_node, nic->pci_path,
                         nic->numa_node);
  if (in->cpu_numa_node < 0 || nic->numa_node < 0)
    return HO_PATH_UNKNOWN;
  return nic->numa_node == in->cpu_numa_node ? HO_PATH_NUMA : HO_PATH_OTHER;
}

static bool add(struct ho_rails *r, const struct ho_rails_in *in,
                const struct ho_nic_info *nic, const char *name,
                enum ho_rail_why why)
{
  if (r->count >= HO_MAX_RAILS)
    return false;
  for (size_t i = 0; i < r->count; i++)
    if (strcmp(r->rail[i].name, name) == 0)
      return false;
  struct ho_rail *x = &r->rail[r->count++];
  memset(x, 0, sizeof *x);
  snprintf(x->name, sizeof x->name, "%s", name);
  x->numa_node = -1;
  x->why = why;
  if (nic) {
    snprintf(x->bus_id, sizeof x->bus_id, "%s", nic->bus_id);
    x->numa_node = nic->numa_node;
    x->path = class_of(in, nic);
    x->rate_mbps = nic->rate_mbps;
  }
  return true;
}

/* ---- the near set -------------------------------------------------------- */

/* Indexes of the active NICs at the smallest class from `dev` with a known
 * class, then the fastest rate, in bus id order (then name). Returns L. */
static size_t near_set(const struct ho_nic_info *nics, size_t n,
                       const struct ho_pci_info *dev, size_t out[HO_MAX_NICS],
                       enum ho_path_class *cls)
{
  enum ho_path_class best = HO_PATH_UNKNOWN;
  unsigned rate = 0;
  for (size_t i = 0; i < n && i < HO_MAX_NICS; i++) {
    if (!usable(&nics[i]))
      continue;
    enum ho_path_class c = ho_path_class(dev->pci_path, dev->numa_node,
                                         nics[i].pci_path, nics[i].numa_node);
    if (c == HO_PATH_UNKNOWN)
      continue;
    if (best == HO_PATH_UNKNOWN || c < best) {
      best = c;
      rate = nics[i].rate_mbps;
    } else if (c == best && nics[i].rate_mbps > rate) {
      rate = nics[i].rate_mbps;
    }
  }
  size_t l = 0;
  for (size_t i = 0; best != HO_PATH_UNKNOWN && i < n && i < HO_MAX_NICS;
       i++) {
    if (!usable(&nics[i]) || nics[i].rate_mbps != rate ||
        ho_path_class(dev->pci_path, dev->numa_node, nics[i].pci_path,
                      nics[i].numa_node) != best)
      continue;
    /* Insert in (bus id, name) order. */
    size_t pos = l;
    while (pos > 0) {
      const struct ho_nic_info *p = &nics[out[pos - 1]];
      int cmp = strcmp(p->bus_id, nics[i].bus_id);
      if (cmp < 0 || (cmp == 0 && strcmp(p->name, nics[i].name) < 0))
        break;
      out[pos] = out[pos - 1];
      pos--;
    }
    out[pos] = i;
    l++;
  }
  *cls = best;
  return l;
}

static bool same_set(const size_t *a, size_t na, const size_t *b, size_t nb)
{
  if (na != nb)
    return false;
  for (size_t i = 0; i < na; i++)
    if (a[i] != b[i])
      return false;
  return true;
}

/* G and i: the host's GPUs whose near set is ours, and our index among
 * them in bus id order. The GPU itself counts even if the list lacks it. */
static void sharing(const struct ho_rails_in *in, const size_t *mine,
                    size_t l, unsigned *g, unsigned *index)
{
  unsigned count = 0, before = 0;
  bool listed = false;
  for (size_t k = 0; k < in->n_gpus; k++) {
    const struct ho_pci_info *o = &in->gpus[k];
    if (!terminated(o->bus_id, sizeof o->bus_id) ||
        !terminated(o->pci_path, sizeof o->pci_path))
      continue;
    size_t theirs[HO_MAX_NICS];
    enum ho_path_class c;
    size_t lo = near_set(in->nics, in->n, o, theirs, &c);
    bool self = ho_bus_id_distance(o->bus_id, in->gpu->bus_id) == 0;
    if (!self && !same_set(mine, l, theirs, lo))
      continue;
    if (self) {
      if (listed)
        continue; /* a second function of our GPU */
      listed = true;
      before = count;
    }
    count++;
  }
  if (!listed)
    count++; /* ours, placed last: before == count - 1 */
  *g = count;
  *index = listed ? before : count - 1;
}

static void choose_near_gpu(const struct ho_rails_in *in, struct ho_rails *r)
{
  size_t near[HO_MAX_NICS];
  enum ho_path_class cls;
  size_t l = near_set(in->nics, in->n, in->gpu, near, &cls);
  if (l == 0)
    return;
  unsigned g = 1, i = 0;
  sharing(in, near, l, &g, &i);
  size_t per = (l + g - 1) / g;
  size_t take = per;
  if (in->max_rails && take > in->max_rails)
    take = in->max_rails;
  if (take > HO_MAX_RAILS)
    take = HO_MAX_RAILS;
  size_t start = ((size_t)i * per) % l;
  r->count = 0;
  for (size_t j = 0; j < take; j++) {
    const struct ho_nic_info *nic = &in->nics[near[(start + j) % l]];
    add(r, in, nic, nic->name, HO_RAIL_NEAR_GPU);
  }
  r->near_class = cls;
  r->near = (unsigned)l;
  r->gpus = g;
  r->gpu_index = i;
}

/* Host memory: the active NICs on the CPU's node at their fastest rate, in
 * name order. */
static void choose_numa_local(const struct ho_rails_in *in, struct ho_rails *r)
{
  if (in->cpu_numa_node < 0)
    return;
  unsigned rate = 0;
  size_t l = 0;
  for (size_t i = 0; i < in->n; i++)
    if (usable(&in->nics[i]) && in->nics[i].numa_node == in->cpu_numa_node) {
      l++;
      if (in->nics[i].rate_mbps > rate)
        rate = in->nics[i].rate_mbps;
    }
  if (l == 0)
    return;
  r->count = 0;
  l = 0;
  for (size_t i = 0; i < in->n; i++) {
    const struct ho_nic_info *nic = &in->nics[i];
    if (!usable(nic) || nic->numa_node != in->cpu_numa_node ||
        nic->rate_mbps != rate ||
        (in->max_rails && r->count >= in->max_rails))
      continue;
    add(r, in, nic, nic->name, HO_RAIL_NUMA_LOCAL);
    l++;
  }
  r->near_class = HO_PATH_NUMA;
  r->near = (unsigned)l;
}

/* ---- the policy ---------------------------------------------------------- */

hipObjOpError_t ho_choose_rails(const struct ho_rails_in *in,
                                struct ho_rails *rails,
                                char primary[HO_NIC_NAME_MAX],
                                struct ho_nic_choice *choice)
{
  if (!in || !rails || !primary || !choice || (!in->nics && in->n))
    return hipObjInvalidValue;
  char name[HO_NIC_NAME_MAX];
  struct ho_nic_choice c;
  hipObjOpError_t e =
      ho_choose_nic(in->nics, in->n, in->gpu ? in->gpu->bus_id : "", in->hint,
                    in->first_active, name, &c);
  if (e != hipObjSuccess)
    return e;
  struct ho_rails r;
  memset(&r, 0, sizeof r);
  const struct ho_nic_info *first = find(in, name, strlen(name));
  bool hinted = in->hint && in->hint[0];
  enum ho_rail_why why = hinted                                  ? HO_RAIL_HINT
                         : c.why == hipObjNicChoiceFirstActive ? HO_RAIL_FIRST_ACTIVE
                                                               : HO_RAIL_CLOSEST_BUS_ID;
  add(&r, in, first, name, why);
  if (hinted) {
    size_t pos = 0;
    const char *n;
    size_t len;
    while (ho_name_list_next(in->hint, &pos, &n, &len)) {
      const struct ho_nic_info *nic = find(in, n, len);
      if (nic && (!in->max_rails || r.count < in->max_rails))
        add(&r, in, nic, nic->name, HO_RAIL_HINT);
    }
  } else if (in->gpu) {
    choose_near_gpu(in, &r);
  } else if (c.why == hipObjNicChoiceFirstActive) {
    choose_numa_local(in, &r);
  }
  /* The first rail is the NIC init opens. */
  const struct ho_nic_info *nic = find(in, r.rail[0].name,
                                       strlen(r.rail[0].name));
  if (nic != first) {
    memset(&c, 0, sizeof c);
    c.why = in->gpu ? hipObjNicChoiceClosestToGpu : hipObjNicChoiceFirstActive;
    c.numa_node = nic ? nic->numa_node : -1;
    if (nic)
      snprintf(c.bus_id, sizeof c.bus_id, "%s", nic->bus_id);
  }
  memcpy(primary, r.rail[0].name, HO_NIC_NAME_MAX);
  *choice = c;
  *rails = r;
  return hipObjSuccess;
}
