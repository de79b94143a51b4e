/* SPDX-License-Identifier: MIT */
/* hipobj.Client: one libhipobj_s3 client (glue.c), shared by any number of
 * Python threads. Transfers run without the GIL; the GIL guards the
 * client's own fields (the in-flight count, the registration cache). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj_py.h"

#define REG_CACHE_CAP 64

typedef struct {
  PyObject_HEAD
  hipObjS3Client_t *s3; /* NULL once closed */
  PyObject *cache;      /* the registration cache (a capsule) */
  unsigned busy;        /* transfers in flight */
  bool rdma;
  PyObject *progress;   /* the callable, or NULL; outlives the glue's use */
} Client;

static int client_init(Client *self, PyObject *args, PyObject *kw)
{
  static char *names[] = {"endpoint", "region", "access_key", "secret_key",
                          "session_token", "nic", "gpu", "part_size",
                          "concurrency", "require_rdma", "rdma", "sign",
                          "use_env", "progress", NULL};
  struct hp_glue_args a = {.gpu = -1, .rdma = 1, .sign = 1, .use_env = 1};
  if (self->s3) {
    PyErr_SetString(PyExc_RuntimeError, "Client.__init__ called twice");
    return -1;
  }
  if (!PyArg_ParseTupleAndKeywords(
          args, kw, "|zz$zzzziKIppppO", names, &a.endpoint, &a.region,
          &a.access_key, &a.secret_key, &a.session_token, &a.nic, &a.gpu,
          &a.part_size, &a.concurrency, &a.require_rdma, &a.rdma, &a.sign,
          &a.use_env, &a.progress))
    return -1;
  if (a.progress == Py_None)
    a.progress = NULL;
  if (a.progress && !PyCallable_Check(a.progress)) {
    PyErr_SetString(PyExc_TypeError, "progress must be callable");
    return -1;
  }
  if (!self->cache && !(self->cache = hp_cache_new(REG_CACHE_CAP)))
    return -1;
  hipObjS3Client_t *c = hp_glue_create(&a);
  if (!c)
    return -1;
  self->s3 = c;
  self->rdma = hipObjS3ClientRdma(c, NULL, 0, NULL) != 0;
  PyObject *old = self->progress;
  Py_XINCREF(a.progress);
  self->progress = a.progress;
  Py_XDECREF(old);
  return 0;
}

/* ---- closing ------------------------------------------------------------ */

static int do_close(Client *self)
{
  if (!self->s3)
    return 0;
  if (self->busy) {
    PyErr_Format(PyExc_RuntimeError, "the client has %u transfers running: "
                 "close it after they return", self->busy);
    return -1;
  }
  hp_cache_clear(self->cache);
  self->s3 = NULL;
  hp_glue_release();
  return 0;
}

static PyObject *client_close(Client *self, PyObject *unused)
{
  return do_close(self) ? NULL : (Py_INCREF(Py_None), Py_None);
}

static PyObject *client_enter(Client *self, PyObject *unused)
{
  Py_INCREF((PyObject *)self);
  return (PyObject *)self;
}

static PyObject *client_exit(Client *self, PyObject *args)
{
  return do_close(self) ? NULL : (Py_INCREF(Py_False), Py_False);
}

static void client_dealloc(Client *self)
{
  PyTypeObject *tp = Py_TYPE((PyObject *)self);
  if (self->s3 && !self->busy) {
    hp_cache_clear(self->cache);
    self->s3 = NULL;
    hp_glue_release();
  }
  Py_XDECREF(self->cache);
  Py_XDECREF(self->progress);
  freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  tp_free(self);
  Py_DECREF(tp);
}

static hipObjS3Client_t *open_client(Client *self)
{
  if (!self->s3)
    hp_raise_msg(hipObjS3InvalidArgument, "the client is closed");
  return self->s3;
}

/* ---- URLs --------------------------------------------------------------- */

struct object_name {
  char bucket[256];
  char key[1100];
};

/* "s3://bucket/key" or "bucket/key". */
static int parse_name(PyObject *url, struct object_name *o)
{
  char buf[1400];
  const char *s = PyUnicode_Check(url) ? PyUnicode_AsUTF8AndSize(url, NULL)
                                       : NULL;
  if (!s) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "the object must be a str: "
                      "'s3://BUCKET/KEY' or 'BUCKET/KEY'");
    return -1;
  }
  bool scheme = strncmp(s, "s3://", 5) == 0;
  if (strlen(s) + 6 > sizeof buf ||
      snprintf(buf, sizeof buf, "%s%s", scheme ? "" : "s3://", s) < 0 ||
      hipObjS3ParseUrl(buf, o->bucket, sizeof o->bucket, o->key,
                       sizeof o->key) != hipObjS3Ok ||
      !o->key[0]) {
    hp_raise_msg(hipObjS3InvalidArgument, "not an object: '%.300s' (expected "
                 "'s3://BUCKET/KEY' or 'BUCKET/KEY')", s);
    return -1;
  }
  return 0;
}

/* ---- transfers ---------------------------------------------------------- */

struct request {
  int op;
  uint64_t offset;
  long long length; /* -1: the target's size, or the whole object */
};

static hipObjS3Status_t run(hipObjS3Client_t *c, const struct object_name *o,
                            const struct hp_target *t,
                            const struct request *q, hipObjS3Result_t *r)
{
  if (q->op == HIPOBJ_RDMA_OP_PUT)
    return hipObjS3PutObject(c, o->bucket, o->key, t->ptr, t->size, t->mem, r);
  if (q->offset == 0 && q->length < 0)
    return hipObjS3GetObject(c, o->bucket, o->key, t->ptr, t->size, t->mem, r);
  size_t len = q->length < 0 ? t->size : (size_t)q->length;
  return hipObjS3GetRange(c, o->bucket, o->key, q->offset, t->ptr, len,
                          t->mem, r);
}

/* The client is busy from before any Python code of the target's runs
 * (__dlpack__, __cuda_array_interface__, a deleter) to after its last use
 * of the client: such code that closes the client gets RuntimeError. */
static PyObject *transfer(Client *self, PyObject *url, PyObject *obj,
                          const struct request *q)
{
  struct object_name o;
  struct hp_target t;
  hipObjS3Result_t r;
  hipObjS3Client_t *c = open_client(self);
  if (!c)
    return NULL;
  self->busy++;
  bool get = q->op == HIPOBJ_RDMA_OP_GET;
  if (parse_name(url, &o) || hp_target_get(obj, get, &t)) {
    self->busy--;
    return NULL;
  }
  PyObject *res = NULL;
  if (q->length >= 0 && (unsigned long long)q->length > t.size) {
    hp_raise_msg(hipObjS3BufferTooSmall, "length %lld is more than "
                 "the target's %zu bytes", q->length, t.size);
  } else if (!self->rdma || !hp_cache_prepare(self->cache, &t)) {
    hipObjS3Status_t st;
    Py_BEGIN_ALLOW_THREADS
    st = run(c, &o, &t, q, &r);
    Py_END_ALLOW_THREADS
    res = st == hipObjS3Ok ? hp_result_new(c, &r, t.kind) : hp_raise(&r);
    if (res && hp_target_check_moved(&t, get))
      Py_CLEAR(res);
  }
  self->busy--;
  hp_target_release(&t);
  return res;
}

static PyObject *client_get_into(Client *self, PyObject *args, PyObject *kw)
{
  static char *names[] = {"url", "target", "offset", "length", NULL};
  PyObject *url, *target, *length = Py_None;
  struct request q = {.op = HIPOBJ_RDMA_OP_GET, .length = -1};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|KO", names, &url, &target,
                                   &q.offset, &length))
    return NULL;
  if (length != Py_None) {
    q.length = PyLong_AsLongLong(length);
    if (q.length == -1 && PyErr_Occurred())
      return NULL;
    if (q.length <= 0)
      return hp_raise_msg(hipObjS3InvalidArgument, "length must be > 0");
  }
  return transfer(self, url, target, &q);
}

static PyObject *client_put_from(Client *self, PyObject *args, PyObject *kw)
{
  static char *names[] = {"url", "source", NULL};
  PyObject *url, *source;
  struct request q = {.op = HIPOBJ_RDMA_OP_PUT, .length = -1};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", names, &url, &source))
    return NULL;
  return transfer(self, url, source, &q);
}

/* HEAD and DELETE: no target. */
static PyObject *plain_call(Client *self, PyObject *url, bool del,
                            hipObjS3Result_t *r)
{
  struct object_name o;
  hipObjS3Client_t *c = open_client(self);
  if (!c || parse_name(url, &o))
    return NULL;
  hipObjS3Status_t st;
  self->busy++;
  Py_BEGIN_ALLOW_THREADS
  st = del ? hipObjS3DeleteObject(c, o.bucket, o.key, r)
           : hipObjS3HeadObject(c, o.bucket, o.key, r);
  Py_END_ALLOW_THREADS
  self->busy--;
  return st == hipObjS3Ok ? (Py_INCREF(Py_None), Py_None) : hp_raise(r);
}

static PyObject *client_head(Client *self, PyObject *url)
{
  hipObjS3Result_t r;
  PyObject *ok = plain_call(self, url, false, &r);
  if (!ok)
    return NULL;
  Py_DECREF(ok);
  return Py_BuildValue("{s:K,s:s}", "size",
                       (unsigned long long)r.objectSize, "etag", r.etag);
}

static PyObject *client_delete(Client *self, PyObject *url)
{
  hipObjS3Result_t r;
  return plain_call(self, url, true, &r);
}

/* ---- state -------------------------------------------------------------- */

static PyObject *client_counters(Client *self, PyObject *unused)
{
  hipObjS3Counters_t k;
  hipObjS3Client_t *c = open_client(self);
  if (!c)
    return NULL;
  hipObjS3GetCounters(c, &k);
  return Py_BuildValue(
      "{s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "rdma_transfers",
      (unsigned long long)k.rdmaTransfers, "rdma_bytes",
      (unsigned long long)k.rdmaBytes, "http_transfers",
      (unsigned long long)k.httpTransfers, "http_bytes",
      (unsigned long long)k.httpBytes, "fallbacks_declined",
      (unsigned long long)k.fallbacksDeclined, "fallbacks_no_rdma",
      (unsigned long long)k.fallbacksNoRdma, "requests",
      (unsigned long long)k.requests);
}

static PyObject *client_get_rdma(Client *self, void *unused)
{
  return PyBool_FromLong(self->s3 && self->rdma);
}

static PyObject *client_get_rdma_reason(Client *self, void *unused)
{
  char why[512] = "";
  if (!open_client(self))
    return NULL;
  if (hipObjS3ClientRdma(self->s3, why, sizeof why, NULL))
    Py_RETURN_NONE;
  return PyUnicode_FromString(why);
}

static PyObject *client_get_closed(Client *self, void *unused)
{
  return PyBool_FromLong(!self->s3);
}

static PyObject *client_registrations(Client *self, PyObject *unused)
{
  return PyLong_FromSsize_t(self->cache ? hp_cache_count(self->cache) : 0);
}

/* ---- the type ----------------------------------------------------------- */

PyDoc_STRVAR(get_into_doc,
"get_into(url, target, offset=0, length=None) -> TransferResult\n--\n\n"
"Read an object into `target`, by RDMA when possible, else over plain HTTP\n"
"(the result says which).\n\n"
"url: 's3://BUCKET/KEY' or 'BUCKET/KEY'.\n"
"target: writable, contiguous memory: any object with the buffer protocol\n"
"  (bytearray, memoryview, numpy.ndarray: host memory), or with __dlpack__\n"
"  (device types CPU, CUDA, ROCm and their pinned host memory: a torch\n"
"  tensor on a GPU), or with __cuda_array_interface__ (device memory).\n"
"  Bytes land in memory order.\n"
"offset, length: with neither, the whole object (it must fit; the rest of\n"
"  the target is left alone). Otherwise bytes [offset, offset+length) of\n"
"  the object (length defaults to the target's size), which must lie\n"
"  inside the object.\n\n"
"The GIL is released during the transfer. Raises a hipobj.Error subclass:\n"
"NoSuchKey/NoSuchBucket (FileNotFoundError), AccessDenied\n"
"(PermissionError), BufferTooSmall, InvalidRange, RdmaDeclined,\n"
"RdmaUnavailable, RdmaFailed, ...");

PyDoc_STRVAR(put_from_doc,
"put_from(url, source) -> TransferResult\n--\n\n"
"Write the bytes of `source` as the object `url`: one request up to the\n"
"client's part size, a multipart upload above it.\n\n"
"source: contiguous memory, as get_into's target (read-only is fine).\n"
"The GIL is released during the transfer.");

static PyMethodDef client_methods[] = {
    {"get_into", (PyCFunction)(void (*)(void))client_get_into,
     METH_VARARGS | METH_KEYWORDS, get_into_doc},
    {"put_from", (PyCFunction)(void (*)(void))client_put_from,
     METH_VARARGS | METH_KEYWORDS, put_from_doc},
    {"head", (PyCFunction)client_head, METH_O,
     "head(url) -> {'size': int, 'etag': str}\n--\n\nThe object's size and "
     "ETag (S3 HEAD)."},
    {"delete", (PyCFunction)client_delete, METH_O,
     "delete(url) -> None\n--\n\nDelete the object (no error if absent)."},
    {"counters", (PyCFunction)client_counters, METH_NOARGS,
     "counters() -> dict\n--\n\nThe client's totals since it was created: "
     "rdma_transfers, rdma_bytes, http_transfers, http_bytes,\n"
     "fallbacks_declined, fallbacks_no_rdma, requests."},
    {"close", (PyCFunction)client_close, METH_NOARGS,
     "close() -> None\n--\n\nRelease the client's registrations and the "
     "client. RuntimeError while transfers run."},
    {"__enter__", (PyCFunction)client_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)client_exit, METH_VARARGS, NULL},
    {"_registrations", (PyCFunction)client_registrations, METH_NOARGS,
     "The number of buffers the client keeps registered (for tests)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef client_getset[] = {
    {"rdma", (getter)client_get_rdma, NULL,
     "Whether transfers will try RDMA.", NULL},
    {"rdma_reason", (getter)client_get_rdma_reason, NULL,
     "Why transfers will not try RDMA (None when they will).", NULL},
    {"closed", (getter)client_get_closed, NULL, "Whether close() ran.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyDoc_STRVAR(client_doc,
"Client(endpoint=None, region=None, *, access_key=None, secret_key=None,\n"
"       session_token=None, nic=None, gpu=-1, part_size=0, concurrency=0,\n"
"       require_rdma=False, rdma=True, sign=True, use_env=True,\n"
"       progress=None)\n--\n\n"
"An S3 client that moves object payloads by RDMA (hipObject) into host or\n"
"GPU memory, with a visible fallback to plain HTTP. Configured as the\n"
"hipobj command: endpoint from AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL,\n"
"region from AWS_REGION / AWS_DEFAULT_REGION, keys from AWS_ACCESS_KEY_ID,\n"
"AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, the NIC from HIPOBJ_NIC (else,\n"
"without a GPU, the first active RDMA device). Arguments win over the\n"
"environment; use_env=False ignores it.\n\n"
"rdma=False: plain HTTP only. require_rdma=True: fail (RdmaUnavailable,\n"
"RdmaDeclined) instead of falling back. sign=False: never sign.\n"
"part_size (default 1 GiB), concurrency (default 4): objects larger than\n"
"a part move as ranges or a multipart upload, parts in parallel.\n"
"progress: progress(done, total) for each GET or PUT of the client, from\n"
"its worker threads (at most every 100 ms per thread, and at the end); a\n"
"true result or an exception cancels the transfer (HttpError).\n\n"
"A context manager; safe to share between threads.");

static PyType_Slot client_slots[] = {
    {Py_tp_doc, (void *)client_doc},
    {Py_tp_init, (void *)client_init},
    {Py_tp_new, (void *)PyType_GenericNew},
    {Py_tp_dealloc, (void *)client_dealloc},
    {Py_tp_methods, client_methods},
    {Py_tp_getset, client_getset},
    {0, NULL}};

static PyType_Spec client_spec = {"hipobj.Client", sizeof(Client), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                                  client_slots};

int hp_client_add(PyObject *module)
{
  PyObject *tp = PyType_FromSpec(&client_spec);
  if (!tp)
    return -1;
  if (PyModule_AddObject(module, "Client", tp)) {
    Py_DECREF(tp);
    return -1;
  }
  return 0;
}
