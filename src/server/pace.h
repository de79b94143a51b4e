/* SPDX-License-Identifier: MIT */
/* Pacing on a software RDMA device: how many payload bytes one transfer
 * may have in flight, from what the device says of the fabric.
 *
 * Soft-RoCE has no out-of-order placement: a packet out of sequence is
 * answered with a NAK and go-back-N, and a READ response out of order
 * restarts the READ. Under reordering (jitter) each restart brings a
 * packet or two in order, so a transfer with many packets in flight
 * crawls (a 1 MiB GET took 7.5 s under netem "loss 1% delay 2ms 1ms",
 * 0.85 s with two 4 KiB work requests in flight; docs/performance.md,
 * "Faults: root causes"). The window follows rxe's count of requester
 * retries (hw counter completer_retry_err): a look that finds new
 * retries since the one before halves it, down to two MTUs (a few looks
 * under reordering); a look that finds none, after at least a window of
 * bytes was posted since the one before, doubles it, up to the whole
 * pipeline (an idle device does not grow it back). Halving rather than a
 * cut to two MTUs at once: Soft-RoCE over lo retries under one bulk
 * stream at about one look in four, and the cut cost such a stream 14-20
 * points of ib_write_bw (docs/performance.md, "What pacing costs a clean
 * fabric"). A device without the counter (hardware NICs) is not paced. */
#ifndef HO_PACE_H
#define HO_PACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/topology.h"

/* How often the counter is read: at most once per interval per device. */
#define HO_PACE_LOOK_NS (10ull * 1000 * 1000)
#define HO_PACE_COUNTER "completer_retry_err"

struct ho_pace {
  const struct ho_topology *topo;
  char nic[HO_NIC_NAME_MAX];
  int port;
  bool on;             /* paced: a software device with the counter */
  size_t mtu;          /* bytes in one packet */
  size_t min, max;     /* bytes: two MTUs; the whole pipeline */
  _Atomic uint64_t next_look_ns;
  _Atomic unsigned long long retries; /* the counter at the last look */
  _Atomic size_t window;
  _Atomic uint64_t shrinks; /* looks that found new retries */
  _Atomic uint64_t posted;  /* bytes posted since the last look */
};

/* Pacing for the device's port when soft (a software device) and the
 * counter can be read; otherwise the window is always max. */
void ho_pace_init(struct ho_pace *p, const struct ho_topology *topo,
                  const char *nic, int port, bool soft, size_t mtu,
                  size_t max);

/* The window now (bytes in flight per transfer); looks at the counter if
 * the interval has passed (one caller looks; the others use the last
 * window). The engine's dispatcher calls it while transfers move. */
size_t ho_pace_window(struct ho_pace *p, uint64_t now_ns);

/* The window as it is, never looking: what a transfer's posts read. A
 * look reads sysfs (about 0.35 ms on the project's two-vCPU VM), which
 * on a transfer's path cost a 64 KiB transfer a sixth of its server
 * time (docs/performance.md, "Where a small transfer's time goes"). */
size_t ho_pace_current(struct ho_pace *p);

/* When the next look is due, on ho_now_ns()'s clock. */
uint64_t ho_pace_next_look(struct ho_pace *p);

/* n payload bytes were posted under the window. */
void ho_pace_posted(struct ho_pace *p, size_t n);

/* The window is below the whole pipeline: the device has been retrying. */
bool ho_pace_troubled(const struct ho_pace *p, size_t window);

#endif
