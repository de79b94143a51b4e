/* SPDX-License-Identifier: MIT */
#include "common/clock.h"

#include <sched.h>

void ho_backoff(unsigned *round, unsigned max_us)
{
  unsigned r = (*round)++;
  if (r < 64)
    return; /* busy poll */
  if (r < 128) {
    sched_yield();
    return;
  }
  unsigned us = 1u << ((r - 128) / 16 < 10 ? (r - 128) / 16 : 10);
  if (us > max_us)
    us = max_us;
  struct timespec ts = {0, (long)us * 1000};
  nanosleep(&ts, 0);
}
