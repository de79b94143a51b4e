/* SPDX-License-Identifier: MIT */
/* Environment settings. Each variable is read once; an unset or empty
 * variable keeps the value already in the struct (the default after
 * ho_options_defaults()). A value that cannot be used keeps that value too
 * and prints exactly one warning line naming the variable, the rejected
 * value (escaped and shortened), what is accepted and what is used. */
#include "options.h"

#include <stddef.h>
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

/* NULL for unset and for set-but-empty (`VAR=` clears a setting). */
static const char *lookup(ho_getenv_fn get, void *ctx, const char *name)
{
  const char *v = get(name, ctx);
  return (v && v[0]) ? v : NULL;
}

/* ---- the table: one row per variable --------------------------------- */

enum opt_kind { OPT_UNSIGNED, OPT_BOOL, OPT_GPU_RUNTIME, OPT_SPIN };

/* Its name, its field, the accepted range (OPT_UNSIGNED), the default
 * (unsigned or bool; OPT_GPU_RUNTIME's is "auto") and the default as
 * hipObjGetEnvVar() shows it. Read in this order, so warnings come in it.
 * Positional: a missing member is a compiler error. */
struct opt_row {
  const char *name;
  enum opt_kind kind;
  size_t offset;
  unsigned min, max;
  unsigned dflt;
  const char *shown;
};

#define FIELD(f) offsetof(struct ho_options, f)
static const struct opt_row rows[] = {
    {"HIPOBJ_MAX_TRANSFERS", OPT_UNSIGNED, FIELD(max_transfers),
     MAX_TRANSFERS_MIN, MAX_TRANSFERS_MAX, 16, "16 connections"},
    {"HIPOBJ_STAGE_TIMEOUT_MS", OPT_UNSIGNED, FIELD(stage_timeout_ms),
     TIMEOUT_MS_MIN, TIMEOUT_MS_MAX, 30000, "30000"},
    {"HIPOBJ_TRANSFER_TIMEOUT_MS", OPT_UNSIGNED, FIELD(transfer_timeout_ms),
     TIMEOUT_MS_MIN, TIMEOUT_MS_MAX, 5000, "5000"},
    {"HIPOBJ_TRANSFER_MAX_MS", OPT_UNSIGNED, FIELD(transfer_max_ms), 0,
     TIMEOUT_MS_MAX, 0, "four transfer timeouts"},
    {"HIPOBJ_MAX_CONNECTIONS", OPT_UNSIGNED, FIELD(max_connections), 1,
     MAX_CONNECTIONS_MAX, 0, "twice HIPOBJ_MAX_TRANSFERS"},
    {"HIPOBJ_MAX_RAILS", OPT_UNSIGNED, FIELD(max_rails), 1, MAX_RAILS_MAX, 0,
     "the rails rule's count"},
    {"HIPOBJ_FAILBACK_MS", OPT_UNSIGNED, FIELD(failback_ms), TIMEOUT_MS_MIN,
     TIMEOUT_MS_MAX, 5000, "5000"},
    {"HIPOBJ_IDLE_TIMEOUT_MS", OPT_UNSIGNED, FIELD(idle_timeout_ms),
     TIMEOUT_MS_MIN, TIMEOUT_MS_MAX, 30000, "30000"},
    {"HIPOBJ_WAIT_TIMEOUT_MS", OPT_UNSIGNED, FIELD(wait_timeout_ms),
     TIMEOUT_MS_MIN, TIMEOUT_MS_MAX, 10000, "10000"},
    {"HIPOBJ_RETRIES", OPT_UNSIGNED, FIELD(retries), 0, RETRIES_MAX, 3, "3"},
    {"HIPOBJ_STALL_TIMEOUT_MS", OPT_UNSIGNED, FIELD(stall_timeout_ms), 0,
     TIMEOUT_MS_MAX, 3000, "3000"},
    {"HIPOBJ_PROBE_INTERVAL_MS", OPT_UNSIGNED, FIELD(probe_interval_ms), 0,
     TIMEOUT_MS_MAX, 200, "200"},
    {"HIPOBJ_SPIN_US", OPT_SPIN, FIELD(spin_us), 0, HO_SPIN_US_MAX,
     HO_SPIN_US_AUTO, "auto: 0 us on Soft-RoCE or 2 CPUs or fewer, else 10"},
    {"HIPOBJ_DMABUF", OPT_BOOL, FIELD(dmabuf), 0, 0, true, "on"},
    {"HIPOBJ_REQUIRE_GPU_DIRECT", OPT_BOOL, FIELD(require_gpu_direct), 0, 0,
     false, "off"},
    {"HIPOBJ_RDMA_DEBUG", OPT_BOOL, FIELD(rdma_debug), 0, 0, false, "off"},
    {"HIPOBJ_DATA_FIRST", OPT_BOOL, FIELD(data_first), 0, 0, true, "on"},
    {"HIPOBJ_SCOPED_TOKENS", OPT_BOOL, FIELD(scoped_tokens), 0, 0, true, "on"},
    {"HIPOBJ_REQUIRE_SCOPED_TOKENS", OPT_BOOL, FIELD(require_scoped_tokens),
     0, 0, false, "off"},
    {"HIPOBJ_GPU_RUNTIME", OPT_GPU_RUNTIME, FIELD(gpu_runtime), 0, 0, 0,
     "auto"},
};
#undef FIELD

#define NROWS (sizeof rows / sizeof rows[0])

static void *field_of(struct ho_options *o, const struct opt_row *r)
{
  return (char *)o + r->offset;
}

static void set_default(struct ho_options *o, const struct opt_row *r)
{
  void *f = field_of(o, r);
  if (r->kind == OPT_UNSIGNED || r->kind == OPT_SPIN)
    *(unsigned *)f = r->dflt;
  else if (r->kind == OPT_BOOL)
    *(bool *)f = r->dflt != 0;
  else
    memcpy(f, "auto", sizeof "auto");
}

static void parse_row(struct ho_options *o, const struct opt_row *r,
                      const char *v)
{
  void *f = field_of(o, r);
  if (r->kind == OPT_UNSIGNED)
    parse_unsigned(r->name, v, r->min, r->max, f);
  else if (r->kind == OPT_BOOL)
    *(bool *)f = !starts_with_no(v);
  else if (r->kind == OPT_SPIN)
    parse_spin(r->name, v, f);
  else
    parse_gpu_runtime(r->name, v, f, sizeof o->gpu_runtime);
}

void ho_options_defaults(struct ho_options *o)
{
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  for (size_t i = 0; i < NROWS; i++)
    set_default(o, &rows[i]);
}

void ho_options_parse(struct ho_options *o, ho_getenv_fn get, void *ctx)
{
  if (!o || !get)
    return;
  for (size_t i = 0; i < NROWS; i++) {
    const char *v = lookup(get, ctx, rows[i].name);
    if (v)
      parse_row(o, &rows[i], v);
  }
}

bool ho_options_var(size_t i, const char **name, const char **shown)
{
  if (i >= NROWS)
    return false;
  *name = rows[i].name;
  *shown = rows[i].shown;
  return true;
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
