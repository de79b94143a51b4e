/* SPDX-License-Identifier: MIT */
#ifndef HO_COMMON_CLOCK_H
#define HO_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic time in nanoseconds. */
static inline uint64_t ho_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleep briefly between polls that found nothing: spin first, then yield,
 * then back off up to max_us, so short waits are not rounded up to a tick. */
void ho_backoff(unsigned *round, unsigned max_us);

/* HIPOBJ_SPIN_US (the wait policy, docs/architecture.md): microseconds up
 * to HO_SPIN_US_MAX, or the device's default, or never block (spin, yield,
 * then sleep as ho_backoff). */
#define HO_SPIN_US_AUTO 0xffffffffu
#define HO_SPIN_US_POLL 0xfffffffeu
#define HO_SPIN_US_MAX 1000000u

/* How long ho_backoff sleeps in a given round: 0 for the rounds that spin
 * (0..63) or yield (64..127), then 1, 2, 4 ... 1024 us, 16 rounds each, at
 * most max_us. Pure: the tests count sleeps with it on a virtual clock. */
unsigned ho_backoff_sleep_us(unsigned round, unsigned max_us);

#endif
