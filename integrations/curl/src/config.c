/* SPDX-License-Identifier: MIT */
/* The client's configuration: explicit arguments over the AWS_* environment
 * over the defaults. A pure function of its inputs, so the tests drive it
 * with a table instead of the process environment. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* A value from the environment; NULL when unset, empty, or ignored. */
static const char *env(const struct ho_s3_settings *s, ho_s3_getenv_fn get,
                       void *ctx, const char *name)
{
  if ((s->flags & HIPOBJ_S3_NO_ENV) || !get)
    return NULL;
  const char *v = get(name, ctx);
  return (v && v[0]) ? v : NULL;
}

static const char *first(const char *a, const char *b)
{
  return (a && a[0]) ? a : b;
}

static bool copy_str(char *dst, size_t cap, const char *src)
{
  size_t n = src ? strnlen(src, cap) : 0;
  if (n >= cap)
    return false;
  if (n)
    memcpy(dst, src, n);
  dst[n] = '\0';
  return true;
}

static bool region_ok(const char *r)
{
  if (!r[0])
    return false;
  for (const char *p = r; *p; p++) {
    char ch = *p;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_' || (ch >= 'A' && ch <= 'Z');
    if (!ok)
      return false;
  }
  return true;
}

/* http:// or https://, a host, no query, no fragment, no blanks. */
static bool endpoint_ok(char *e)
{
  size_t skip;
  if (strncasecmp(e, "http://", 7) == 0)
    skip = 7;
  else if (strncasecmp(e, "https://", 8) == 0)
    skip = 8;
  else
    return false;
  if (!e[skip] || e[skip] == '/')
    return false;
  for (const char *p = e; *p; p++)
    if (*p <= ' ' || *p == '?' || *p == '#' || *p == 0x7f)
      return false;
  size_t n = strlen(e);
  while (n > skip && e[n - 1] == '/')
    e[--n] = '\0';
  return true;
}

static hipObjS3Status_t bad(char *err, size_t len, const char *what)
{
  if (err && len)
    snprintf(err, len, "%s", what);
  return hipObjS3InvalidArgument;
}

static hipObjS3Status_t resolve_location(const hipObjS3Config_t *cfg,
                                         ho_s3_getenv_fn get, void *ctx,
                                         struct ho_s3_settings *s, char *err,
                                         size_t len)
{
  const char *region = first(cfg ? cfg->region : NULL,
                             first(env(s, get, ctx, "AWS_REGION"),
                                   env(s, get, ctx, "AWS_DEFAULT_REGION")));
  if (!copy_str(s->region, sizeof s->region, first(region, "us-east-1")) ||
      !region_ok(s->region))
    return bad(err, len, "invalid region: use letters, digits and '-' "
                         "(for example us-east-1)");
  const char *ep = first(cfg ? cfg->endpoint : NULL,
                         first(env(s, get, ctx, "AWS_ENDPOINT_URL_S3"),
                               env(s, get, ctx, "AWS_ENDPOINT_URL")));
  if (ep) {
    if (!copy_str(s->endpoint, sizeof s->endpoint, ep))
      return bad(err, len, "endpoint URL too long");
  } else {
    snprintf(s->endpoint, sizeof s->endpoint, "https://s3.%s.amazonaws.com",
             s->region);
  }
  if (!endpoint_ok(s->endpoint))
    return bad(err, len, "invalid endpoint: expected http://HOST[:PORT] or "
                         "https://HOST[:PORT]");
  return hipObjS3Ok;
}

static hipObjS3Status_t resolve_keys(const hipObjS3Config_t *cfg,
                                     ho_s3_getenv_fn get, void *ctx,
                                     struct ho_s3_settings *s, char *err,
                                     size_t len)
{
  const char *ak = cfg ? cfg->accessKey : NULL;
  const char *sk = cfg ? cfg->secretKey : NULL;
  const char *st = cfg ? cfg->sessionToken : NULL;
  if ((ak && ak[0]) != (sk && sk[0]))
    return bad(err, len, "give both an access key and a secret key, or "
                         "neither");
  if (!(ak && ak[0])) {
    ak = env(s, get, ctx, "AWS_ACCESS_KEY_ID");
    sk = env(s, get, ctx, "AWS_SECRET_ACCESS_KEY");
    st = first(st, env(s, get, ctx, "AWS_SESSION_TOKEN"));
    if (!ak != !sk)
      return bad(err, len, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                           "must be set together");
  }
  if (!copy_str(s->access_key, sizeof s->access_key, ak) ||
      !copy_str(s->secret_key, sizeof s->secret_key, sk) ||
      !copy_str(s->session_token, sizeof s->session_token, st))
    return bad(err, len, "access key, secret key or session token too long");
  /* A ':' would end the user name curl signs with. */
  if (strchr(s->access_key, ':'))
    return bad(err, len, "access key contains ':'");
  s->sign = s->access_key[0] && !(s->flags & HIPOBJ_S3_ANONYMOUS);
  return hipObjS3Ok;
}

static hipObjS3Status_t resolve_nic(const hipObjS3Config_t *cfg,
                                    ho_s3_getenv_fn get, void *ctx,
                                    struct ho_s3_settings *s, char *err,
                                    size_t len)
{
  const char *nic = first(cfg ? cfg->nicHint : NULL,
                          env(s, get, ctx, "HIPOBJ_NIC"));
  if (!nic)
    return hipObjS3Ok;
  if (!copy_str(s->nic_hint, sizeof s->nic_hint, nic))
    return bad(err, len, "NIC hint too long");
  s->has_nic_hint = true;
  return hipObjS3Ok;
}

/* AWS_MAX_ATTEMPTS, as the AWS SDKs read it: attempts in all, 1..20. */
static hipObjS3Status_t resolve_attempts(ho_s3_getenv_fn get, void *ctx,
                                         struct ho_s3_settings *s, char *err,
                                         size_t len)
{
  s->max_attempts = HO_S3_MAX_ATTEMPTS_DEFAULT;
  const char *v = env(s, get, ctx, "AWS_MAX_ATTEMPTS");
  if (!v)
    return hipObjS3Ok;
  unsigned n = 0;
  for (const char *p = v; *p; p++) {
    if (*p < '0' || *p > '9' || n > HO_S3_MAX_ATTEMPTS_MAX)
      return bad(err, len, "AWS_MAX_ATTEMPTS is not a number from 1 to 20");
    n = n * 10 + (unsigned)(*p - '0');
  }
  if (n < 1 || n > HO_S3_MAX_ATTEMPTS_MAX)
    return bad(err, len, "AWS_MAX_ATTEMPTS is not a number from 1 to 20");
  s->max_attempts = n;
  return hipObjS3Ok;
}

static hipObjS3Status_t resolve_transfer(const hipObjS3Config_t *cfg,
                                         struct ho_s3_settings *s, char *err,
                                         size_t len)
{
  s->part_size = HIPOBJ_S3_DEFAULT_PART_SIZE;
  s->concurrency = HIPOBJ_S3_DEFAULT_CONCURRENCY;
  s->gpu_device = -1;
  if (!cfg)
    return hipObjS3Ok;
  if (cfg->partSize > HIPOBJ_MAX_BUFFER_SIZE)
    return bad(err, len, "part size above 4 GiB (hipObject's largest "
                         "transfer)");
  if (cfg->partSize)
    s->part_size = cfg->partSize;
  if (cfg->concurrency > HIPOBJ_S3_MAX_CONCURRENCY)
    return bad(err, len, "concurrency above 64");
  if (cfg->concurrency)
    s->concurrency = cfg->concurrency;
  if (cfg->gpuDevice < -1)
    return bad(err, len, "gpuDevice below -1");
  s->gpu_device = cfg->gpuDevice;
  if ((cfg->flags & HIPOBJ_S3_NO_RDMA) && (cfg->flags & HIPOBJ_S3_REQUIRE_RDMA))
    return bad(err, len, "HIPOBJ_S3_NO_RDMA and HIPOBJ_S3_REQUIRE_RDMA "
                         "contradict each other");
  return hipObjS3Ok;
}

static hipObjS3Status_t resolve_callbacks(const hipObjS3Config_t *cfg,
                                          struct ho_s3_settings *s, char *err,
                                          size_t len)
{
  if (!cfg)
    return hipObjS3Ok;
  const hipObjS3DeviceOps_t *d = cfg->deviceOps;
  if (d) {
    if (!d->copyToDevice || !d->copyToHost || !d->allocHost != !d->freeHost)
      return bad(err, len, "deviceOps needs copyToDevice and copyToHost, "
                           "and allocHost with freeHost or neither");
    s->dev = *d;
    s->has_dev_ops = true;
  }
  s->progress = cfg->progress;
  s->progress_ctx = cfg->progressCtx;
  return hipObjS3Ok;
}

hipObjS3Status_t ho_s3_settings_resolve(const hipObjS3Config_t *cfg,
                                        ho_s3_getenv_fn get, void *get_ctx,
                                        struct ho_s3_settings *out, char *err,
                                        size_t err_len)
{
  if (!out)
    return hipObjS3InvalidArgument;
  memset(out, 0, sizeof *out);
  out->flags = cfg ? cfg->flags : 0;
  if (out->flags & ~(uint32_t)(HIPOBJ_S3_NO_RDMA | HIPOBJ_S3_REQUIRE_RDMA |
                               HIPOBJ_S3_ANONYMOUS | HIPOBJ_S3_NO_ENV |
                               HIPOBJ_S3_FIRST_ACTIVE_NIC))
    return bad(err, err_len, "unknown flags");
  hipObjS3Status_t st;
  if ((st = resolve_location(cfg, get, get_ctx, out, err, err_len)) ||
      (st = resolve_keys(cfg, get, get_ctx, out, err, err_len)) ||
      (st = resolve_transfer(cfg, out, err, err_len)) ||
      (st = resolve_nic(cfg, get, get_ctx, out, err, err_len)) ||
      (st = resolve_attempts(get, get_ctx, out, err, err_len)) ||
      (st = resolve_callbacks(cfg, out, err, err_len)))
    return st;
  return hipObjS3Ok;
}
