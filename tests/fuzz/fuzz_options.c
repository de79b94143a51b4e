/* SPDX-License-Identifier: MIT */
/* The options parser on arbitrary values: the input is split at NUL bytes
 * into up to twenty values, given in turn to HIPOBJ_MAX_TRANSFERS,
 * HIPOBJ_STAGE_TIMEOUT_MS, HIPOBJ_TRANSFER_TIMEOUT_MS, HIPOBJ_DMABUF,
 * HIPOBJ_REQUIRE_GPU_DIRECT, HIPOBJ_RDMA_DEBUG, HIPOBJ_GPU_RUNTIME,
 * HIPOBJ_MAX_CONNECTIONS, HIPOBJ_IDLE_TIMEOUT_MS, HIPOBJ_WAIT_TIMEOUT_MS,
 * HIPOBJ_SCOPED_TOKENS, HIPOBJ_REQUIRE_SCOPED_TOKENS, HIPOBJ_MAX_RAILS,
 * HIPOBJ_RETRIES, HIPOBJ_STALL_TIMEOUT_MS, HIPOBJ_SPIN_US,
 * HIPOBJ_DATA_FIRST, HIPOBJ_PROBE_INTERVAL_MS, HIPOBJ_FAILBACK_MS and
 * HIPOBJ_TRANSFER_MAX_MS.
 * Whatever they hold, every field must stay in its documented range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "options.h"

#define NVARS 20

static const char *const names[NVARS] = {
    "HIPOBJ_MAX_TRANSFERS",      "HIPOBJ_STAGE_TIMEOUT_MS",
    "HIPOBJ_TRANSFER_TIMEOUT_MS", "HIPOBJ_DMABUF",
    "HIPOBJ_REQUIRE_GPU_DIRECT", "HIPOBJ_RDMA_DEBUG",
    "HIPOBJ_GPU_RUNTIME",        "HIPOBJ_MAX_CONNECTIONS",
    "HIPOBJ_IDLE_TIMEOUT_MS",    "HIPOBJ_WAIT_TIMEOUT_MS",
    "HIPOBJ_SCOPED_TOKENS",      "HIPOBJ_REQUIRE_SCOPED_TOKENS",
    "HIPOBJ_MAX_RAILS",          "HIPOBJ_RETRIES",
    "HIPOBJ_STALL_TIMEOUT_MS",   "HIPOBJ_SPIN_US",
    "HIPOBJ_DATA_FIRST",         "HIPOBJ_PROBE_INTERVAL_MS",
    "HIPOBJ_FAILBACK_MS",        "HIPOBJ_TRANSFER_MAX_MS",
};

struct values {
  const char *v[NVARS];
};

static const char *lookup(const char *name, void *ctx)
{
  const struct values *vals = ctx;
  for (int i = 0; i < NVARS; i++)
    if (strcmp(names[i], name) == 0)
      return vals->v[i];
  abort(); /* the parser asked for a variable it does not document */
}

static void check(const struct ho_options *o)
{
  if (o->max_transfers < 1 || o->max_transfers > 1024)
    abort();
  if (o->stage_timeout_ms < 1 || o->stage_timeout_ms > 86400000u)
    abort();
  if (o->transfer_timeout_ms < 1 || o->transfer_timeout_ms > 86400000u)
    abort();
  if (o->max_connections > 4096)
    abort();
  if (o->max_rails > 16)
    abort();
  if (o->failback_ms < 1 || o->failback_ms > 86400000u)
    abort();
  if (o->transfer_max_ms > 86400000u)
    abort();
  if (o->retries > 10 || o->stall_timeout_ms > 86400000u ||
      o->probe_interval_ms > 86400000u)
    abort();
  if (o->idle_timeout_ms < 1 || o->idle_timeout_ms > 86400000u)
    abort();
  if (o->wait_timeout_ms < 1 || o->wait_timeout_ms > 86400000u)
    abort();
  if (o->spin_us > HO_SPIN_US_MAX && o->spin_us != HO_SPIN_US_AUTO &&
      o->spin_us != HO_SPIN_US_POLL)
    abort();
  if (!memchr(o->gpu_runtime, '\0', sizeof o->gpu_runtime))
    abort();
  if (strcmp(o->gpu_runtime, "auto") && strcmp(o->gpu_runtime, "hip") &&
      strcmp(o->gpu_runtime, "cuda") && strcmp(o->gpu_runtime, "none"))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* A private NUL-terminated copy: values may run to the end of input. */
  char *buf = malloc(size + 1);
  if (!buf)
    return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  struct values vals = {{NULL}};
  size_t pos = 0;
  for (int i = 0; i < NVARS && pos <= size; i++) {
    vals.v[i] = buf + pos;
    pos += strlen(buf + pos) + 1;
  }
  struct ho_options o;
  ho_options_defaults(&o);
  ho_options_parse(&o, lookup, &vals);
  check(&o);
  free(buf);
  return 0;
}
