/* SPDX-License-Identifier: MIT */
/* Environment settings. Each variable is read once; an unset or empty
 * variable keeps the value already in the struct (the default after
 * ho_options_defaults()). A value that cannot be used keeps that value too
 * and prints exactly one warning line naming the variable, the rejected
 * value (escaped and shortened), what is accepted and what is used. */
#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/size.h"

#define MAX_TRANSFERS_MIN 1u
#define MAX_TRANSFERS_MAX 1024u
#define MAX_CONNECTIONS_MAX 4096u
#define MAX_RAILS_MAX 16u /* HIPOBJ_INFO_MAX_RAILS */
#define TIMEOUT_MS_MIN 1u
#define TIMEOUT_MS_MAX 86400000u /* 24 hours */
#define RETRIES_MAX 10u

/* The longest rejected value echoed in a warning, before escaping. */
#define ECHO_MAX 32

static const char *const gpu_runtimes[] = {"auto", "hip", "cuda", "none"};

_Static_assert(sizeof(((struct ho_options *)0)->gpu_runtime) > 4,
               "gpu_runtime holds the longest runtime name");

void ho_options_defaults(struct ho_options *o)
{
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->max_transfers = 16;
  o->stage_timeout_ms = 30000;
  o->transfer_timeout_ms = 5000;
  o->max_connections = 0;
  o->idle_timeout_ms = 30000;
  o->wait_timeout_ms = 10000;
  o->retries = 3;
  o->stall_timeout_ms = 1000;
  o->spin_us = HO_SPIN_US_AUTO;
  o->dmabuf = true;
  o->require_gpu_direct = false;
  o->rdma_debug = false;
  o->scoped_tokens = true;
  o->require_scoped_tokens = false;
  memcpy(o->gpu_runtime, "auto", sizeof "auto");
}

/* A printable, bounded rendering of a hostile value for a warning line:
 * no control characters (so no second line), at most ECHO_MAX input bytes. */
static void escape_value(const char *v, char *out, size_t cap)
{
  size_t o = 0;
  size_t i = 0;
  for (; v[i] && i < ECHO_MAX && o + 5 < cap; i++) {
    unsigned char c = (unsigned char)v[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out[o++] = (char)c;
    } else {
      out[o++] = '\\';
      out[o++] = 'x';
      ho_hex_encode(&c, 1, out + o); /* two digits and a NUL, within cap */
      o += 2;
    }
  }
  if (v[i] && o + 4 < cap) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o] = '\0';
}

/* Strict decimal: digits only (no sign, no space, no base prefix), no
 * overflow, within [min, max]. *out is written only on success. */
static bool parse_decimal(const char *s, unsigned min, unsigned max,
                          unsigned *out)
{
  uint64_t v;
  if (!ho_parse_uint(s, max, &v) || v < min)
    return false;
  *out = (unsigned)v;
  return true;
}

static void parse_unsigned(const char *name, const char *v, unsigned min,
                           unsigned max, unsigned *field)
{
  if (parse_decimal(v, min, max, field))
    return;
  char shown[ECHO_MAX * 4 + 8];
  escape_value(v, shown, sizeof shown);
  ho_warn("%s=\"%s\" ignored: expected a decimal number from %u to %u; "
          "using %u",
          name, shown, min, max, *field);
}

/* auto, poll, or microseconds. */
static void parse_spin(const char *name, const char *v, unsigned *field)
{
  if (strcmp(v, "auto") == 0) {
    *field = HO_SPIN_US_AUTO;
    return;
  }
  if (strcmp(v, "poll") == 0) {
    *field = HO_SPIN_US_POLL;
    return;
  }
  if (parse_decimal(v, 0, HO_SPIN_US_MAX, field))
    return;
  char shown[ECHO_MAX * 4 + 8];
  escape_value(v, shown, sizeof shown);
  char using[16];
  if (*field == HO_SPIN_US_AUTO)
    snprintf(using, sizeof using, "auto");
  else if (*field == HO_SPIN_US_POLL)
    snprintf(using, sizeof using, "poll");
  else
    snprintf(using, sizeof using, "%u", *field);
  ho_warn("%s=\"%s\" ignored: expected auto, poll or a decimal number from "
          "0 to %u; using %s",
          name, shown, HO_SPIN_US_MAX, using);
}

/* "0", "n", "N" (and anything starting with them) mean off. */
static bool starts_with_no(const char *v)
{
  /* 0, no, n..., and also false and off, which users write too. */
  return v[0] == '0' || v[0] == 'n' || v[0] == 'N' || v[0] == 'f' ||
         v[0] == 'F' || strncasecmp(v, "off", 3) == 0;
}

static void parse_gpu_runtime(const char *name, const char *v, char *field,
                              size_t cap)
{
  for (size_t i = 0; i < sizeof gpu_runtimes / sizeof gpu_runtimes[0]; i++) {
    size_t len = strlen(gpu_runtimes[i]);
    if (strcmp(v, gpu_runtimes[i]) == 0 && len < cap) {
      memcpy(field, gpu_runtimes[i], len + 1);
      return;
    }
  }
  char shown[ECHO_MAX * 4 + 8];
  escape_value(v, shown, sizeof shown);
  ho_warn("%s=\"%s\" ignored: expected auto, hip, cuda or none; using %s",
          name, shown, field);
}

/* NULL for unset and for set-but-empty (`VAR=` clears a setting). */
static const char *lookup(ho_getenv_fn get, void *ctx, const char *name)
{
  const char *v = get(name, ctx);
  return (v && v[0]) ? v : NULL;
}

void ho_options_parse(struct ho_options *o, ho_getenv_fn get, void *ctx)
{
  if (!o || !get)
    return;
  const char *v;
  if ((v = lookup(get, ctx, "HIPOBJ_MAX_TRANSFERS")))
    parse_unsigned("HIPOBJ_MAX_TRANSFERS", v, MAX_TRANSFERS_MIN,
                   MAX_TRANSFERS_MAX, &o->max_transfers);
  if ((v = lookup(get, ctx, "HIPOBJ_STAGE_TIMEOUT_MS")))
    parse_unsigned("HIPOBJ_STAGE_TIMEOUT_MS", v, TIMEOUT_MS_MIN,
                   TIMEOUT_MS_MAX, &o->stage_timeout_ms);
  if ((v = lookup(get, ctx, "HIPOBJ_TRANSFER_TIMEOUT_MS")))
    parse_unsigned("HIPOBJ_TRANSFER_TIMEOUT_MS", v, TIMEOUT_MS_MIN,
                   TIMEOUT_MS_MAX, &o->transfer_timeout_ms);
  if ((v = lookup(get, ctx, "HIPOBJ_MAX_CONNECTIONS")))
    parse_unsigned("HIPOBJ_MAX_CONNECTIONS", v, 1, MAX_CONNECTIONS_MAX,
                   &o->max_connections);
  if ((v = lookup(get, ctx, "HIPOBJ_MAX_RAILS")))
    parse_unsigned("HIPOBJ_MAX_RAILS", v, 1, MAX_RAILS_MAX, &o->max_rails);
  if ((v = lookup(get, ctx, "HIPOBJ_IDLE_TIMEOUT_MS")))
    parse_unsigned("HIPOBJ_IDLE_TIMEOUT_MS", v, TIMEOUT_MS_MIN, TIMEOUT_MS_MAX,
                   &o->idle_timeout_ms);
  if ((v = lookup(get, ctx, "HIPOBJ_WAIT_TIMEOUT_MS")))
    parse_unsigned("HIPOBJ_WAIT_TIMEOUT_MS", v, TIMEOUT_MS_MIN, TIMEOUT_MS_MAX,
                   &o->wait_timeout_ms);
  if ((v = lookup(get, ctx, "HIPOBJ_RETRIES")))
    parse_unsigned("HIPOBJ_RETRIES", v, 0, RETRIES_MAX, &o->retries);
  if ((v = lookup(get, ctx, "HIPOBJ_STALL_TIMEOUT_MS")))
    parse_unsigned("HIPOBJ_STALL_TIMEOUT_MS", v, 0, TIMEOUT_MS_MAX,
                   &o->stall_timeout_ms);
  if ((v = lookup(get, ctx, "HIPOBJ_SPIN_US")))
    parse_spin("HIPOBJ_SPIN_US", v, &o->spin_us);
  if ((v = lookup(get, ctx, "HIPOBJ_DMABUF")))
    o->dmabuf = !starts_with_no(v);
  if ((v = lookup(get, ctx, "HIPOBJ_REQUIRE_GPU_DIRECT")))
    o->require_gpu_direct = !starts_with_no(v);
  if ((v = lookup(get, ctx, "HIPOBJ_RDMA_DEBUG")))
    o->rdma_debug = !starts_with_no(v);
  if ((v = lookup(get, ctx, "HIPOBJ_SCOPED_TOKENS")))
    o->scoped_tokens = !starts_with_no(v);
  if ((v = lookup(get, ctx, "HIPOBJ_REQUIRE_SCOPED_TOKENS")))
    o->require_scoped_tokens = !starts_with_no(v);
  if ((v = lookup(get, ctx, "HIPOBJ_GPU_RUNTIME")))
    parse_gpu_runtime("HIPOBJ_GPU_RUNTIME", v, o->gpu_runtime,
                      sizeof o->gpu_runtime);
}

static const char *env_lookup(const char *name, void *ctx)
{
  (void)ctx;
  return getenv(name);
}

void ho_options_from_env(struct ho_options *o)
{
  ho_options_defaults(o);
  ho_options_parse(o, env_lookup, NULL);
}
