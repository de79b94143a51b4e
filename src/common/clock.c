/* SPDX-License-Identifier: MIT */
#include "common/clock.h"

#include <sched.h>

unsigned ho_backoff_sleep_us(unsigned round, unsigned max_us)
{
  if (round < 128)
    return 0;
  unsigned us = 1u << ((round - 128) / 16 < 10 ? (round - 128) / 16 : 10);
  return us > max_us ? max_us : us;
}

void ho_backoff(unsigned *round, unsigned max_us)
{
  unsigned r = (*round)++;
  if (r < 64)
    return; /* busy poll */
  if (r < 128) {
    sched_yield();
    return;
  }
  struct timespec ts = {0, (long)ho_backoff_sleep_us(r, max_us) * 1000};
  nanosleep(&ts, 0);
}
