/* SPDX-License-Identifier: MIT */
#include "memlock.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "common/log.h"

static uint64_t page_size(void)
{
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (uint64_t)p : 4096u;
}

uint64_t ho_memlock_span(uintptr_t addr, size_t len)
{
  if (len == 0)
    return 0;
  uint64_t page = page_size();
  uint64_t first = (uint64_t)addr / page;
  uint64_t last = ((uint64_t)addr + (len - 1)) / page; /* addr + len - 1 of
                                                         a valid range */
  return (last - first + 1) * page;
}

uint64_t ho_memlock_conns(unsigned qps) { return (uint64_t)qps * page_size(); }

/* "64 KiB", "8 MiB", "1.5 GiB": for people. */
static void human(uint64_t v, char *out, size_t cap)
{
  static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  uint64_t whole = v, tenth = 0;
  while (whole >= 1024 && u < 4) {
    tenth = (whole % 1024) * 10 / 1024;
    whole /= 1024;
    u++;
  }
  if (u == 0 || tenth == 0)
    snprintf(out, cap, "%" PRIu64 " %s", whole, unit[u]);
  else
    snprintf(out, cap, "%" PRIu64 ".%" PRIu64 " %s", whole, tenth, unit[u]);
}

hipObjOpError_t ho_memlock_check(const struct ho_topology *t, uint64_t need,
                                 const char *what)
{
  struct ho_pin_limits l;
  if (!t || !t->ops->pin_limits || t->ops->pin_limits(t, &l) != hipObjSuccess ||
      l.ipc_lock || l.limit == ~0ull)
    return hipObjSuccess;
  if (l.pinned <= l.limit && need <= l.limit - l.pinned)
    return hipObjSuccess;
  char lim[32], pinned[32], needed[32];
  human(l.limit, lim, sizeof lim);
  human(l.pinned, pinned, sizeof pinned);
  human(need, needed, sizeof needed);
  ho_warn("%s needs %s pinned, and this process pins %s already: more than "
          "RLIMIT_MEMLOCK allows (%s; `ulimit -l` says it in KiB). Raise "
          "it (ulimit -l unlimited; systemd LimitMEMLOCK=infinity; docker "
          "run --ulimit memlock=-1), or pin less (HIPOBJ_MAX_CONNECTIONS, "
          "smaller buffers)",
          what, needed, pinned, lim);
  return hipObjSizeTooLarge;
}
