/* SPDX-License-Identifier: MIT */
#include "rdma/vendor.h"

#include <stddef.h>

/* 14 is 67 ms a try; 6 retries bound a dead peer at about 0.5 s on
 * conforming NICs and on rxe. 16 outstanding READs keep a PUT's pipeline
 * full; the device's max_qp_rd_atom caps it. */
static const struct ho_qp_tuning generic = {"generic", 14, 6, 6, 12, 16};

static const struct {
  uint32_t vendor_id;
  struct ho_qp_tuning tuning;
} rows[] = {
    {HO_VENDOR_BROADCOM, {"bnxt", 14, 6, 6, 12, 16}},
    {HO_VENDOR_PENSANDO, {"ionic", 14, 6, 6, 12, 16}},
};

const struct ho_qp_tuning *ho_vendor_tuning(uint32_t vendor_id)
{
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].vendor_id == vendor_id)
      return &rows[i].tuning;
  return &generic;
}

uint64_t ho_qp_retry_budget_ns(const struct ho_qp_tuning *t)
{
  uint64_t try_ns = 4096ull << t->timeout; /* 4.096 us * 2^timeout */
  return try_ns * (uint64_t)(t->retry_cnt + 1);
}

uint64_t ho_retire_grace_ns(const struct ho_qp_tuning *t, uint64_t wanted_ns)
{
  uint64_t floor = 2 * ho_qp_retry_budget_ns(t);
  return wanted_ns > floor ? wanted_ns : floor;
}
