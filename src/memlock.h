/* SPDX-License-Identifier: MIT */
/* What the process may pin. Every MR over host memory (a host buffer, a
 * staging buffer, a connection's message area) is charged by the kernel
 * (ib_umem_get()) to the process's pinned memory, against RLIMIT_MEMLOCK,
 * unless the process has CAP_IPC_LOCK; dma-buf and peer-memory MRs over
 * GPU memory are not. Going over fails the registration with ENOMEM, which
 * says nothing about the limit: these checks come first and name it. */
#ifndef HO_MEMLOCK_H
#define HO_MEMLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "platform/topology.h"

/* Bytes the kernel charges for an MR over [addr, addr + len): its pages. */
uint64_t ho_memlock_span(uintptr_t addr, size_t len);

/* hipObjSuccess when `need` more bytes pinned fit under RLIMIT_MEMLOCK
 * with what the process pins now, or when the limit does not apply
 * (unlimited, CAP_IPC_LOCK) or is not known. Otherwise one warning that
 * names the limit, its value, what is pinned, what `what` needs and how to
 * raise it, and hipObjSizeTooLarge. */
hipObjOpError_t ho_memlock_check(const struct ho_topology *t, uint64_t need,
                                 const char *what);

/* What the connections pin at most: `qps` QPs' message areas, a page each
 * (the provider's queues may pin more). */
uint64_t ho_memlock_conns(unsigned qps);

#endif
