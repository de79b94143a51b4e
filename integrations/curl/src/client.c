/* SPDX-License-Identifier: MIT */
/* The client: resolved settings, the hipObject instance it uses, a stack of
 * idle curl handles (each keeps its connections alive between requests),
 * and the counters that make every fallback visible. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *process_env(const char *name, void *ctx)
{
  (void)ctx;
  return getenv(name);
}

void hipObjS3ConfigInit(hipObjS3Config_t *cfg)
{
  if (!cfg)
    return;
  memset(cfg, 0, sizeof *cfg);
  cfg->gpuDevice = -1;
}

void ho_s3_count(atomic_uint_fast64_t *counter, uint64_t n)
{
  atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

static void why_no_rdma(hipObjS3Client_t *c, hipObjOpError_t e)
{
  const char *what = "hipObject is unavailable";
  if (e == hipObjNicNotFound)
    what = c->s.has_nic_hint ? "no active RDMA device by the hinted name"
                             : "no usable RDMA device";
  else if (e == hipObjDmabufNotSupported)
    what = "GPU memory cannot be registered";
  snprintf(c->no_rdma_why, sizeof c->no_rdma_why, "%s (hipObjInit: %s)", what,
           hipObjGetErrorString(e));
}

static hipObjS3Status_t start_rdma(hipObjS3Client_t *c)
{
  if (c->s.flags & HIPOBJ_S3_NO_RDMA) {
    snprintf(c->no_rdma_why, sizeof c->no_rdma_why,
             "RDMA disabled (HIPOBJ_S3_NO_RDMA)");
    return hipObjS3Ok;
  }
  hipObjConfig_t hc;
  memset(&hc, 0, sizeof hc);
  hc.gpuDevice = c->s.gpu_device;
  hc.nicHint = c->s.has_nic_hint ? c->s.nic_hint : NULL;
  if (c->s.flags & HIPOBJ_S3_FIRST_ACTIVE_NIC)
    hc.flags = HIPOBJ_INIT_FIRST_ACTIVE_NIC;
  hipObjError_t e = hipObjInit(&hc);
  if (e.opError == hipObjSuccess || e.opError == hipObjAlreadyInitialized) {
    c->rdma = true;
    c->owns_init = e.opError == hipObjSuccess;
    return hipObjS3Ok;
  }
  c->init_error = e.opError;
  why_no_rdma(c, e.opError);
  return (c->s.flags & HIPOBJ_S3_REQUIRE_RDMA) ? hipObjS3RdmaUnavailable
                                               : hipObjS3Ok;
}

static bool curl_ready(void)
{
  /* curl_global_init is reference counted; the first call does the work. */
  return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

hipObjS3Status_t hipObjS3ClientCreate(const hipObjS3Config_t *cfg,
                                      hipObjS3Client_t **out,
                                      hipObjS3Result_t *result)
{
  hipObjS3Result_t local;
  hipObjS3Result_t *res = result ? result : &local;
  ho_s3_result_clear(res);
  if (!out)
    return ho_s3_fail(res, hipObjS3InvalidArgument, "no output pointer");
  hipObjS3Client_t *c = calloc(1, sizeof *c);
  if (!c)
    return ho_s3_fail(res, hipObjS3OutOfMemory, "out of memory");
  hipObjS3Status_t st = ho_s3_settings_resolve(
      cfg, process_env, NULL, &c->s, res->message, sizeof res->message);
  if (st != hipObjS3Ok) {
    res->status = st;
    goto free_client;
  }
  snprintf(c->sigv4, sizeof c->sigv4, "aws:amz:%s:s3", c->s.region);
  if (!curl_ready()) {
    st = ho_s3_fail(res, hipObjS3OutOfMemory, "curl_global_init failed");
    goto free_client;
  }
  ho_mutex_init(&c->handles_mu);
  st = start_rdma(c);
  if (st != hipObjS3Ok) {
    res->rdmaError = c->init_error;
    ho_s3_fail(res, st, "RDMA is required but unavailable: %s",
               c->no_rdma_why);
    goto cleanup_curl;
  }
  *out = c;
  return hipObjS3Ok;

cleanup_curl:
  ho_mutex_destroy(&c->handles_mu);
  curl_global_cleanup();
free_client:
  free(c);
  return st;
}

void hipObjS3ClientDestroy(hipObjS3Client_t *c)
{
  if (!c)
    return;
  ho_mutex_lock(&c->handles_mu);
  for (unsigned i = 0; i < c->n_idle; i++)
    curl_easy_cleanup(c->idle[i]);
  c->n_idle = 0;
  ho_mutex_unlock(&c->handles_mu);
  ho_mutex_destroy(&c->handles_mu);
  if (c->owns_init)
    hipObjShutdown();
  curl_global_cleanup();
  free(c);
}

int hipObjS3ClientRdma(const hipObjS3Client_t *c, char *why, size_t whyLen,
                       hipObjOpError_t *err)
{
  if (!c)
    return 0;
  if (c->rdma)
    return 1;
  if (why && whyLen)
    snprintf(why, whyLen, "%s", c->no_rdma_why);
  if (err)
    *err = c->init_error;
  return 0;
}

void hipObjS3GetCounters(const hipObjS3Client_t *c, hipObjS3Counters_t *out)
{
  if (!out)
    return;
  memset(out, 0, sizeof *out);
  if (!c)
    return;
  out->rdmaTransfers = atomic_load(&c->rdma_transfers);
  out->rdmaBytes = atomic_load(&c->rdma_bytes);
  out->httpTransfers = atomic_load(&c->http_transfers);
  out->httpBytes = atomic_load(&c->http_bytes);
  out->fallbacksDeclined = atomic_load(&c->fallbacks_declined);
  out->fallbacksNoRdma = atomic_load(&c->fallbacks_no_rdma);
  out->requests = atomic_load(&c->requests);
}

CURL *ho_s3_handle_get(hipObjS3Client_t *c)
{
  CURL *h = NULL;
  ho_mutex_lock(&c->handles_mu);
  if (c->n_idle > 0)
    h = c->idle[--c->n_idle];
  ho_mutex_unlock(&c->handles_mu);
  if (h) {
    curl_easy_reset(h); /* keeps the connection cache */
    return h;
  }
  return curl_easy_init();
}

void ho_s3_handle_put(hipObjS3Client_t *c, CURL *h)
{
  if (!h)
    return;
  ho_mutex_lock(&c->handles_mu);
  if (c->n_idle < HO_S3_IDLE_HANDLES) {
    c->idle[c->n_idle++] = h;
    h = NULL;
  }
  ho_mutex_unlock(&c->handles_mu);
  if (h)
    curl_easy_cleanup(h);
}

const char *hipObjS3StatusString(hipObjS3Status_t st)
{
  static const char *const names[] = {
      [hipObjS3Ok] = "success",
      [hipObjS3InvalidArgument] = "invalid argument",
      [hipObjS3OutOfMemory] = "out of memory",
      [hipObjS3ConnectFailed] = "cannot reach the endpoint",
      [hipObjS3NoSuchBucket] = "no such bucket",
      [hipObjS3NoSuchKey] = "no such key",
      [hipObjS3AccessDenied] = "access denied",
      [hipObjS3InvalidRange] = "invalid range",
      [hipObjS3BufferTooSmall] = "buffer too small",
      [hipObjS3HttpError] = "HTTP or S3 error",
      [hipObjS3ProtocolError] = "protocol error",
      [hipObjS3RdmaUnavailable] = "RDMA unavailable",
      [hipObjS3RdmaDeclined] = "RDMA declined by the server",
      [hipObjS3RdmaFailed] = "RDMA transfer failed",
      [hipObjS3NoDeviceOps] = "device memory needs deviceOps for plain HTTP",
      [hipObjS3DeviceCopyFailed] = "device copy failed",
  };
  if ((unsigned)st < sizeof names / sizeof names[0] && names[st])
    return names[st];
  return "unknown status";
}
