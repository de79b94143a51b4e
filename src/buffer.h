/* SPDX-License-Identifier: MIT */
/* The buffer map: registered buffers by the exact address they were
 * registered at, at most HIPOBJ_MAX_BUFFERS of them, each at most 4 GiB.
 * Entries are reference counted: the map holds one reference, every lookup
 * another, every abandoned staging copy another. */
#ifndef HO_BUFFER_H
#define HO_BUFFER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "rails.h"
#include "platform/platform.h"
#include "rdma/transport.h"

enum ho_buf_kind {
  HO_BUF_HOST = 0,   /* plain MR over host memory */
  HO_BUF_DIRECT = 1, /* device memory, GPU-direct (dma-buf or plain MR) */
  HO_BUF_STAGED = 2  /* device memory through a pinned host staging buffer */
};

struct ho_buf {
  atomic_uint refs;
  atomic_uint abandoned; /* staging copies abandoned and maybe running */
  uintptr_t addr;        /* the address it was registered at */
  size_t size;
  enum ho_buf_kind kind;
  bool dmabuf;           /* DIRECT through a dma-buf MR */
  void *staging;         /* HO_BUF_STAGED: the pinned host buffer */
  uint64_t token_addr;   /* what tokens name: addr, or the staging buffer */
  struct ibv_mr *mr;                           /* on rail 0's device */
  _Atomic(struct ibv_mr *) rail_mr[HO_MAX_RAILS]; /* on rail i's, made on
                                                  first use ([0] unused) */
  const struct ho_verbs_ops *verbs;
  const struct ho_gpu_ops *gpu;
};

struct ho_buffers;

/* scoped: tokens name memory windows, so MRs grant no remote access, only
 * window binding; otherwise MRs grant remote read and write. */
hipObjOpError_t ho_buffers_create(const struct ho_platform *plat,
                                  struct ho_device *dev,
                                  const struct ho_options *opts, bool scoped,
                                  struct ho_buffers **out);
/* Drops the map's references; entries something else still holds (an
 * abandoned copy that never finished) are left to their holders. */
void ho_buffers_destroy(struct ho_buffers *m);

/* host_only: hipObjBufRegisterHost(). *native gets the GPU runtime's error. */
hipObjOpError_t ho_buffers_register(struct ho_buffers *m, void *ptr,
                                    size_t size, bool host_only, int *native);
hipObjOpError_t ho_buffers_deregister(struct ho_buffers *m, void *ptr);

/* The device of rail i (1 <= i < HO_MAX_RAILS), set before the map is
 * used; rail 0's is the one it was created with. */
void ho_buffers_set_rail(struct ho_buffers *m, unsigned i,
                         struct ho_device *dev);
/* The buffer's MR on rail i: rail 0's registration, or one made on that
 * rail's device on first use (the same path as the first: dma-buf, plain,
 * staged memory, host memory; host pages checked against RLIMIT_MEMLOCK
 * again, as the kernel charges them per MR). Errors: SizeTooLarge
 * (memlock), RdmaError, InvalidValue (no such rail). */
hipObjOpError_t ho_buf_rail_mr(struct ho_buffers *m, struct ho_buf *b,
                               unsigned i, struct ibv_mr **out, int *native);

/* A new reference to the entry registered at exactly ptr, or NULL. */
struct ho_buf *ho_buffers_find(struct ho_buffers *m, const void *ptr);
unsigned ho_buffers_count(struct ho_buffers *m);

void ho_buf_get(struct ho_buf *b);
void ho_buf_put(struct ho_buf *b);

/* [offset, offset+size) inside the buffer, computed without overflow. */
bool ho_buf_range_ok(const struct ho_buf *b, uint64_t offset, uint64_t size);

#endif
