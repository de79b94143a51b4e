/* SPDX-License-Identifier: MIT */
/* Staging copies that timed out but may still run. Each keeps its buffer
 * entry (so the staging memory stays allocated and deregistration reports
 * hipObjBusy) until its event says the copy is over. Handing a copy over
 * cannot fail: room is reserved before the copy starts. */
#ifndef HO_ABANDONED_H
#define HO_ABANDONED_H

#include "buffer.h"

struct ho_abandoned;
struct ho_abandoned_slot;

hipObjOpError_t ho_abandoned_create(const struct ho_gpu_ops *gpu,
                                    struct ho_abandoned **out);
/* Releases copies that are over; leaks (on purpose) the events and buffers
 * of those still running, with one warning. */
void ho_abandoned_destroy(struct ho_abandoned *a);

/* Room for one copy; InternalError when out of memory. */
hipObjOpError_t ho_abandoned_reserve(struct ho_abandoned *a,
                                     struct ho_abandoned_slot **out);
/* Give the room back: the copy finished in time. */
void ho_abandoned_unreserve(struct ho_abandoned *a, struct ho_abandoned_slot *s);
/* Hand over a running copy: takes ev and a new reference to b. */
void ho_abandoned_add(struct ho_abandoned *a, struct ho_abandoned_slot *s,
                      struct ho_gpu_event *ev, struct ho_buf *b);

/* Release the copies that are over (of b only, or all when b is NULL). */
void ho_abandoned_collect(struct ho_abandoned *a, struct ho_buf *b);
/* Collect b's copies, then: does one still run? */
bool ho_abandoned_busy(struct ho_abandoned *a, struct ho_buf *b);
/* For tests: copies tracked. */
unsigned ho_abandoned_count(struct ho_abandoned *a);

#endif
