/* SPDX-License-Identifier: MIT */
#include "pace.h"

#include <stdio.h>
#include <string.h>

void ho_pace_init(struct ho_pace *p, const struct ho_topology *topo,
                  const char *nic, int port, bool soft, size_t mtu,
                  size_t max)
{
  unsigned long long v = 0;
  memset(p, 0, sizeof *p);
  p->topo = topo;
  p->port = port;
  snprintf(p->nic, sizeof p->nic, "%s", nic ? nic : "");
  p->max = max;
  p->mtu = mtu;
  p->min = 2 * mtu < max ? 2 * mtu : max;
  p->on = soft && topo && topo->ops->hw_counter &&
          topo->ops->hw_counter(topo, p->nic, port, HO_PACE_COUNTER, &v) ==
              hipObjSuccess;
  atomic_store(&p->retries, v);
  atomic_store(&p->window, max);
}

/* Read the counter; shrink on new retries, else grow. */
static void look(struct ho_pace *p)
{
  unsigned long long v;
  if (p->topo->ops->hw_counter(p->topo, p->nic, p->port, HO_PACE_COUNTER,
                               &v) != hipObjSuccess)
    return; /* keep the window: the next look may read it */
  size_t w = atomic_load(&p->window);
  uint64_t posted = atomic_exchange(&p->posted, 0);
  if (v != atomic_exchange(&p->retries, v)) {
    atomic_store(&p->window, w / 2 > p->min ? w / 2 : p->min);
    atomic_fetch_add(&p->shrinks, 1);
  } else if (w < p->max && posted >= w) {
    atomic_store(&p->window, w > p->max / 2 ? p->max : 2 * w);
  }
}

void ho_pace_posted(struct ho_pace *p, size_t n)
{
  if (p->on)
    atomic_fetch_add_explicit(&p->posted, n, memory_order_relaxed);
}

bool ho_pace_troubled(const struct ho_pace *p, size_t window)
{
  return p->on && window < p->max;
}

size_t ho_pace_window(struct ho_pace *p, uint64_t now_ns)
{
  if (!p->on)
    return p->max;
  uint64_t due = atomic_load(&p->next_look_ns);
  if (now_ns >= due &&
      atomic_compare_exchange_strong(&p->next_look_ns, &due,
                                     now_ns + HO_PACE_LOOK_NS))
    look(p);
  return atomic_load(&p->window);
}

size_t ho_pace_current(struct ho_pace *p)
{
  return p->on ? atomic_load(&p->window) : p->max;
}

uint64_t ho_pace_next_look(struct ho_pace *p)
{
  return atomic_load(&p->next_look_ns);
}
