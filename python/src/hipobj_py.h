/* SPDX-License-Identifier: MIT */
/* hipobj._core: the Python extension on libhipobj_s3. Internal header
 * shared by its files: the client type, targets (what a Python object's
 * memory is), the registration cache, device copies, errors. */
#ifndef HIPOBJ_PY_H
#define HIPOBJ_PY_H

#define PY_SSIZE_T_CLEAN
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#include <Python.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hipobj_s3.h>

/* ---- errors (errors.c) -------------------------------------------------- */

/* Creates the exception classes and adds them to the module. */
int hp_errors_add(PyObject *module);
/* Raises the exception for a failed result; returns NULL. */
PyObject *hp_raise(const hipObjS3Result_t *r);
/* Raises hipobj.Error with a message of our own (status InvalidArgument
 * unless said otherwise); returns NULL. */
PyObject *hp_raise_msg(hipObjS3Status_t st, const char *fmt, ...);

/* ---- targets (target.c) ------------------------------------------------- */

/* The memory behind a Python object, for one call. */
struct hp_target {
  char *ptr;
  size_t size;
  hipObjS3MemKind_t mem;
  int device_type;   /* a DLPack device type: 1 CPU, 2 CUDA, 10 ROCm */
  int device_id;
  PyObject *owner;   /* the object whose lifetime the memory has (new ref) */
  Py_buffer view;    /* buffer protocol: held until released */
  bool has_view;
  PyObject *capsule; /* DLPack: the consumed capsule (new ref) */
  void *managed;     /* DLPack: the DLManagedTensor, deleted at release */
  bool versioned;    /* DLPack 1.x: managed is a DLManagedTensorVersioned */
  const char *kind;  /* "buffer", "dlpack", "cuda_array_interface" */
};

/* Resolves obj: DLPack, then __cuda_array_interface__, then the buffer
 * protocol. writable: the call writes into it. 0, or -1 with an
 * exception set. */
int hp_target_get(PyObject *obj, bool writable, struct hp_target *t);
void hp_target_release(struct hp_target *t);
/* After a transfer: 0 if t's owner, exported again, still has its memory
 * where t says; -1 with RuntimeError if it moved (or another exception if
 * it cannot be exported now). */
int hp_target_check_moved(const struct hp_target *t, bool writable);

/* ---- the registration cache (regcache.c) -------------------------------- */

struct hp_cache;

/* A cache of at most `cap` registrations; NULL on failure (exception). */
PyObject *hp_cache_new(unsigned cap);
/* Before a transfer of t: drop stale registrations that overlap t's start
 * address, and register t's memory for its owner if it can be cached.
 * 0, or -1 with an exception set (a registration the library refuses is not
 * an error: the glue then registers per call). Holds the GIL throughout. */
int hp_cache_prepare(PyObject *cache, const struct hp_target *t);
/* Deregisters everything and forgets every owner. */
void hp_cache_clear(PyObject *cache);
/* How many registrations the cache holds. */
Py_ssize_t hp_cache_count(PyObject *cache);

/* ---- device copies for the plain-HTTP path (gpu.c) ---------------------- */

/* hipObjS3DeviceOps_t over the CUDA driver API or HIP, loaded on first use
 * with dlopen. Copies use unified addressing, so any device's memory. */
void hp_gpu_device_ops(hipObjS3DeviceOps_t *ops);

/* ---- glue clients (glue.c) ---------------------------------------------- */

struct hp_glue_args {
  const char *endpoint, *region, *access_key, *secret_key, *session_token;
  const char *nic;
  PyObject *progress; /* borrowed; the caller keeps it alive */
  int gpu, require_rdma, rdma, sign, use_env;
  unsigned long long part_size;
  unsigned concurrency;
};

/* A glue client for these arguments, counted among the process's; NULL
 * with an exception set. */
hipObjS3Client_t *hp_glue_create(const struct hp_glue_args *a);
/* One client is done with its glue client: when none is left, destroy
 * them all. */
void hp_glue_release(void);
/* Whether a live glue client can use RDMA (hipObject's instance is up). */
bool hp_glue_rdma_live(void);

/* ---- results (result.c) ------------------------------------------------- */

int hp_result_add(PyObject *module);
/* A TransferResult; kind: how the target was found. */
PyObject *hp_result_new(const hipObjS3Client_t *c, const hipObjS3Result_t *r,
                        const char *kind);

/* ---- the client (client.c) ---------------------------------------------- */

int hp_client_add(PyObject *module);

#endif
