/* SPDX-License-Identifier: MIT */
/* Test only: functions added to hipobj._core when it is built for the
 * simulated fabric (python/CMakeLists.txt): hipObject's internal modules on
 * the fakes of tests/fakes as the client, and the in-process S3 responder
 * of integrations/curl/tests/fabric_s3.c on the reference engine as the
 * server, so the package's RDMA path runs end to end in one process. The
 * GPU is the fake runtime: its "device memory" is host memory it tracks,
 * which the tests allocate, fill and read through these functions. */
#include <stdio.h>
#include <stdlib.h>

#include "../../src/hipobj_py.h"

#include "fabric_s3.h"
#include "fakes/fake_gpu.h"
#include "fakes/world.h"

static struct {
  struct world w;
  struct ho_engine *engine;
  struct fabric_s3 *s3;
  char endpoint[64];
  bool up;
} fx;

static PyObject *fabric_start(PyObject *mod, PyObject *unused)
{
  struct ho_engine_config ec = {0};
  int port = 0;
  if (fx.up)
    return PyUnicode_FromString(fx.endpoint);
  fake_gpu_reset();
  if (world_create(&fx.w, &fake_gpu_ops) != 0 ||
      world_init(&fx.w, WORLD_CLIENT_NIC) != hipObjSuccess) {
    PyErr_SetString(PyExc_RuntimeError, "the fake world did not start");
    return NULL;
  }
  ec.nic = WORLD_SERVER_NIC;
  ec.chunk_size = 64 * 1024;
  ec.ready_timeout_ms = 300;
  ec.rdma_timeout_ms = 2000;
  if (ho_engine_create(&fx.w.plat, &ec, &fx.engine) != hipObjSuccess ||
      !(fx.s3 = fabric_s3_start(fx.engine, &port))) {
    PyErr_SetString(PyExc_RuntimeError, "the fabric S3 responder did not "
                    "start");
    return NULL;
  }
  snprintf(fx.endpoint, sizeof fx.endpoint, "http://127.0.0.1:%d", port);
  fx.up = true;
  return PyUnicode_FromString(fx.endpoint);
}

static PyObject *fabric_counts(PyObject *mod, PyObject *unused)
{
  if (!fx.up)
    Py_RETURN_NONE;
  struct fabric_counts *k = fabric_s3_counts(fx.s3);
  return Py_BuildValue(
      "{s:I,s:I,s:I,s:I,s:I,s:K,s:K}", "rdma_get", atomic_load(&k->rdma_get),
      "rdma_put", atomic_load(&k->rdma_put), "http_get",
      atomic_load(&k->http_get), "http_put", atomic_load(&k->http_put),
      "declined", atomic_load(&k->declined), "rdma_bytes",
      (unsigned long long)atomic_load(&k->rdma_bytes), "http_bytes",
      (unsigned long long)atomic_load(&k->http_bytes));
}

static PyObject *fabric_set_mode(PyObject *mod, PyObject *arg)
{
  long m = PyLong_AsLong(arg);
  if (m == -1 && PyErr_Occurred())
    return NULL;
  if (fx.up)
    fabric_s3_set_mode(fx.s3, (enum fabric_mode)m);
  Py_RETURN_NONE;
}

/* The stored bytes of "/bucket/key", or None. */
static PyObject *fabric_object(PyObject *mod, PyObject *arg)
{
  const char *path = PyUnicode_AsUTF8AndSize(arg, NULL);
  uint8_t *data = NULL;
  size_t size = 0;
  if (!path)
    return NULL;
  if (!fx.up || !fabric_s3_object(fx.s3, path, &data, &size))
    Py_RETURN_NONE;
  PyObject *b = PyBytes_FromStringAndSize((const char *)data,
                                          (Py_ssize_t)size);
  free(data);
  return b;
}

static PyObject *fabric_stop(PyObject *mod, PyObject *unused)
{
  if (fx.up) {
    fabric_s3_stop(fx.s3);
    ho_engine_destroy(fx.engine);
    hipObjShutdown();
    world_destroy(&fx.w);
    fx.up = false;
  }
  Py_RETURN_NONE;
}

/* ---- the fake GPU's memory -------------------------------------------- */

static PyObject *gpu_malloc(PyObject *mod, PyObject *arg)
{
  size_t n = PyLong_AsSize_t(arg);
  if (n == (size_t)-1 && PyErr_Occurred())
    return NULL;
  void *p = fake_gpu_malloc(n);
  return p ? PyLong_FromVoidPtr(p) : PyErr_NoMemory();
}

static PyObject *gpu_free(PyObject *mod, PyObject *arg)
{
  void *p = PyLong_AsVoidPtr(arg);
  if (PyErr_Occurred())
    return NULL;
  fake_gpu_free(p);
  Py_RETURN_NONE;
}

/* _fabric_gpu_read(address, n) -> bytes; the fake's memory is host memory. */
static PyObject *gpu_read(PyObject *mod, PyObject *args)
{
  PyObject *addr;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "On", &addr, &n))
    return NULL;
  const char *p = PyLong_AsVoidPtr(addr);
  return PyErr_Occurred() ? NULL : PyBytes_FromStringAndSize(p, n);
}

static PyObject *gpu_set_dmabuf(PyObject *mod, PyObject *arg)
{
  int on = PyObject_IsTrue(arg);
  if (on < 0)
    return NULL;
  fake_gpu_set_dmabuf_supported(on);
  Py_RETURN_NONE;
}

static PyObject *gpu_live(PyObject *mod, PyObject *unused)
{
  return PyLong_FromSize_t(fake_gpu_live_allocations());
}

PyMethodDef hp_fabric_functions[] = {
    {"_fabric_gpu_malloc", gpu_malloc, METH_O, NULL},
    {"_fabric_gpu_free", gpu_free, METH_O, NULL},
    {"_fabric_gpu_read", gpu_read, METH_VARARGS, NULL},
    {"_fabric_gpu_set_dmabuf", gpu_set_dmabuf, METH_O, NULL},
    {"_fabric_gpu_live", gpu_live, METH_NOARGS, NULL},
    {"_fabric_start", fabric_start, METH_NOARGS, NULL},
    {"_fabric_counts", fabric_counts, METH_NOARGS, NULL},
    {"_fabric_set_mode", fabric_set_mode, METH_O, NULL},
    {"_fabric_object", fabric_object, METH_O, NULL},
    {"_fabric_stop", fabric_stop, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};
