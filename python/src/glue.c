/* SPDX-License-Identifier: MIT */
/* The process's libhipobj_s3 clients: created with the hipobj command's
 * configuration (the AWS_* environment, HIPOBJ_NIC, else the first active
 * RDMA device on a host without a GPU), device copies for the HTTP path,
 * the progress callback; destroyed together.
 *
 * The glue's first client initialises hipObject and shuts it down when it
 * is destroyed, so glue clients are destroyed only when every one is
 * released, in reverse order of creation. All under the GIL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj_py.h"

static struct {
  hipObjS3Client_t **all; /* in creation order */
  size_t n, cap;
  size_t open;
} glue;

static int glue_add(hipObjS3Client_t *c)
{
  if (glue.n == glue.cap) {
    size_t cap = glue.cap ? glue.cap * 2 : 8;
    void *p = realloc(glue.all, cap * sizeof *glue.all);
    if (!p)
      return -1;
    glue.all = p;
    glue.cap = cap;
  }
  glue.all[glue.n++] = c;
  glue.open++;
  return 0;
}

void hp_glue_release(void)
{
  if (--glue.open)
    return;
  while (glue.n)
    hipObjS3ClientDestroy(glue.all[--glue.n]);
}

/* Whether a glue client that can use RDMA is alive (so hipObject's
 * instance is): a process forked now would inherit it. */
bool hp_glue_rdma_live(void)
{
  for (size_t i = 0; i < glue.n; i++)
    if (hipObjS3ClientRdma(glue.all[i], NULL, 0, NULL))
      return true;
  return false;
}

/* ---- creation ----------------------------------------------------------- */

/* The glue's progress callback, on any thread of a transfer: the Python
 * callable with the GIL. A true result, or an exception (printed as
 * unraisable), cancels the transfer. */
static int progress_cb(void *ctx, uint64_t done, uint64_t total)
{
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *res = PyObject_CallFunction((PyObject *)ctx, "KK",
                                        (unsigned long long)done,
                                        (unsigned long long)total);
  int cancel = 1;
  if (res) {
    cancel = PyObject_IsTrue(res);
    Py_DECREF(res);
  }
  if (cancel < 0 || !res) {
    PyErr_WriteUnraisable((PyObject *)ctx);
    cancel = 1;
  }
  PyGILState_Release(g);
  return cancel;
}

static void fill_config(const struct hp_glue_args *a, const char *nic,
                        const hipObjS3DeviceOps_t *ops, hipObjS3Config_t *cfg)
{
  hipObjS3ConfigInit(cfg);
  cfg->endpoint = a->endpoint;
  cfg->region = a->region;
  cfg->accessKey = a->access_key;
  cfg->secretKey = a->secret_key;
  cfg->sessionToken = a->session_token;
  cfg->partSize = a->part_size;
  cfg->concurrency = a->concurrency;
  cfg->flags = (a->rdma ? 0 : HIPOBJ_S3_NO_RDMA) |
               (a->require_rdma ? HIPOBJ_S3_REQUIRE_RDMA : 0) |
               (a->sign ? 0 : HIPOBJ_S3_ANONYMOUS) |
               (a->use_env ? 0 : HIPOBJ_S3_NO_ENV) |
               HIPOBJ_S3_FIRST_ACTIVE_NIC; /* as the hipobj command */
  cfg->gpuDevice = a->gpu;
  cfg->nicHint = nic;
  cfg->deviceOps = ops;
  if (a->progress) {
    cfg->progress = progress_cb;
    cfg->progressCtx = a->progress;
  }
}

static hipObjS3Client_t *create(const struct hp_glue_args *a)
{
  hipObjS3Config_t cfg;
  hipObjS3Result_t r;
  hipObjS3DeviceOps_t ops;
  hipObjS3Client_t *c = NULL;
  hp_gpu_device_ops(&ops);
  fill_config(a, a->nic, &ops, &cfg);
  hipObjS3Status_t st = hipObjS3ClientCreate(&cfg, &c, &r);
  if (st != hipObjS3Ok)
    hp_raise(&r);
  return c;
}

hipObjS3Client_t *hp_glue_create(const struct hp_glue_args *a)
{
  hipObjS3Client_t *c = create(a);
  if (c && glue_add(c)) {
    hipObjS3ClientDestroy(c);
    PyErr_NoMemory();
    return NULL;
  }
  return c;
}
