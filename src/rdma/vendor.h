/* SPDX-License-Identifier: MIT */
/* Vendor QP attributes, by PCI vendor ID. Unknown vendors get the generic
 * row. Retry counts stay below 7 on every row: Soft-RoCE treats retry_cnt 7
 * as "retry forever", and a dead peer must be a bounded failure. */
#ifndef HO_RDMA_VENDOR_H
#define HO_RDMA_VENDOR_H

#include <stdint.h>

#define HO_VENDOR_BROADCOM 0x14E4u
#define HO_VENDOR_PENSANDO 0x1DD8u

struct ho_qp_tuning {
  const char *name;
  uint8_t timeout;       /* 4.096 us * 2^timeout per try */
  uint8_t retry_cnt;     /* transport retries */
  uint8_t rnr_retry;     /* receiver-not-ready retries */
  uint8_t min_rnr_timer; /* IBTA encoding */
  uint8_t rd_atomic_cap; /* outstanding RDMA READs, before the device cap */
};

const struct ho_qp_tuning *ho_vendor_tuning(uint32_t vendor_id);

/* The longest a QP with this tuning keeps retrying one request before its
 * work request fails: (retry_cnt + 1) tries of 4.096 us * 2^timeout
 * (docs/protocol.md, section 7). ~470 ms for timeout 14, retry_cnt 6. */
uint64_t ho_qp_retry_budget_ns(const struct ho_qp_tuning *t);

/* The grace period of a retired QP: at least twice the retry budget, so
 * that no retransmission of its connection outlives it. */
uint64_t ho_retire_grace_ns(const struct ho_qp_tuning *t, uint64_t wanted_ns);

#endif
