/* SPDX-License-Identifier: MIT */
/* What a Python object's memory is, for one transfer: the buffer protocol
 * (host memory), DLPack (__dlpack__: DLManagedTensor parsed here from the
 * documented struct), or __cuda_array_interface__ (device memory). The
 * memory must be contiguous; bytes move in memory order. */
#include <string.h>

#include "hipobj_py.h"

/* ---- DLPack (dlpack.h, v0.x ABI), declared from its documentation ------- */

enum {
  DL_CPU = 1, DL_CUDA = 2, DL_CUDA_HOST = 3, DL_ROCM = 10, DL_ROCM_HOST = 11,
  DL_CUDA_MANAGED = 13
};

typedef struct {
  int32_t device_type;
  int32_t device_id;
} dl_device;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} dl_dtype;

typedef struct {
  void *data;
  dl_device device;
  int32_t ndim;
  dl_dtype dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL: compact row-major */
  uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed {
  dl_tensor t;
  void *manager_ctx;
  void (*deleter)(struct dl_managed *self);
} dl_managed;

/* DLPack 1.x: DLManagedTensorVersioned, in a "dltensor_versioned" capsule,
 * the answer to __dlpack__(max_version=(1, 0)); its flags say whether the
 * memory is read-only or a copy. */
enum { DL_FLAG_READ_ONLY = 1u << 0, DL_FLAG_IS_COPIED = 1u << 1 };

typedef struct dl_managed_v {
  uint32_t major, minor;
  void *manager_ctx;
  void (*deleter)(struct dl_managed_v *self);
  uint64_t flags;
  dl_tensor t;
} dl_managed_v;

/* Whether shape/strides (in elements) describe a compact row-major block;
 * the element count in *count. */
static bool compact(int ndim, const int64_t *shape, const int64_t *strides,
                    uint64_t *count)
{
  uint64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return false;
    if (shape[i] != 0 && n > UINT64_MAX / (uint64_t)shape[i])
      return false;
    n *= (uint64_t)shape[i];
  }
  *count = n;
  if (!strides || n == 0)
    return true;
  int64_t want = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    if (shape[i] != 1 && strides[i] != want)
      return false;
    want *= shape[i];
  }
  return true;
}

static int size_of(uint64_t count, uint64_t item, size_t *out)
{
  if (item && count > SIZE_MAX / item) {
    hp_raise_msg(hipObjS3InvalidArgument, "the target is too large");
    return -1;
  }
  *out = (size_t)(count * item);
  return 0;
}

static int dlpack_device(struct hp_target *t, int type, int id)
{
  t->device_type = type;
  t->device_id = id;
  switch (type) {
  case DL_CPU:
  case DL_CUDA_HOST:
  case DL_ROCM_HOST:
    t->mem = hipObjS3MemHost;
    return 0;
  case DL_CUDA:
  case DL_ROCM:
    t->mem = hipObjS3MemDevice;
    return 0;
  case DL_CUDA_MANAGED:
    hp_raise_msg(hipObjS3InvalidArgument, "managed memory is not supported "
                 "(DLPack device type 13): use device or host memory");
    return -1;
  default:
    hp_raise_msg(hipObjS3InvalidArgument, "DLPack device type %d is not "
                 "supported (CPU, CUDA, ROCm and their host memory are)",
                 type);
    return -1;
  }
}

/* __dlpack__(max_version=(1, 0)), or __dlpack__() for a producer that
 * knows no versions (TypeError). */
static PyObject *call_dlpack(PyObject *obj)
{
  PyObject *meth = PyObject_GetAttrString(obj, "__dlpack__");
  if (!meth)
    return NULL;
  PyObject *args = PyTuple_New(0);
  PyObject *kw = Py_BuildValue("{s:(ii)}", "max_version", 1, 0);
  PyObject *cap = args && kw ? PyObject_Call(meth, args, kw) : NULL;
  if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    cap = PyObject_CallNoArgs(meth);
  }
  Py_XDECREF(kw);
  Py_XDECREF(args);
  Py_DECREF(meth);
  return cap;
}

static int from_dlpack(PyObject *obj, bool writable, struct hp_target *t)
{
  PyObject *cap = call_dlpack(obj);
  if (!cap)
    return -1;
  const dl_tensor *d;
  uint64_t flags = 0;
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    dl_managed_v *v = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (!v || PyCapsule_SetName(cap, "used_dltensor_versioned")) {
      Py_DECREF(cap);
      return -1;
    }
    /* Ours now: the deleter runs in hp_target_release. */
    t->capsule = cap;
    t->managed = v;
    t->versioned = true;
    if (v->major != 1) {
      hp_raise_msg(hipObjS3InvalidArgument, "DLPack %u.%u is not "
                   "supported (1.x is)", v->major, v->minor);
      return -1;
    }
    d = &v->t;
    flags = v->flags;
  } else {
    dl_managed *m = PyCapsule_GetPointer(cap, "dltensor");
    if (!m || PyCapsule_SetName(cap, "used_dltensor")) {
      Py_DECREF(cap);
      return -1;
    }
    t->capsule = cap;
    t->managed = m;
    d = &m->t;
  }
  t->kind = "dlpack";
  if (writable && (flags & DL_FLAG_READ_ONLY)) {
    hp_raise_msg(hipObjS3InvalidArgument, "the DLPack tensor is read-only: "
                 "it cannot be a GET's target");
    return -1;
  }
  if (writable && (flags & DL_FLAG_IS_COPIED)) {
    hp_raise_msg(hipObjS3InvalidArgument, "the DLPack tensor is a copy of "
                 "the object's memory: bytes written there would be lost");
    return -1;
  }
  uint64_t count = 0;
  if (d->ndim < 0 || (d->ndim > 0 && !d->shape) ||
      !compact(d->ndim, d->shape, d->strides, &count)) {
    hp_raise_msg(hipObjS3InvalidArgument, "the DLPack tensor is not "
                 "contiguous: make it so (.contiguous())");
    return -1;
  }
  uint64_t item = ((uint64_t)d->dtype.bits * d->dtype.lanes + 7) / 8;
  if (dlpack_device(t, d->device.device_type, d->device.device_id) ||
      size_of(count, item, &t->size))
    return -1;
  t->ptr = (char *)d->data + d->byte_offset;
  return 0;
}

/* ---- __cuda_array_interface__ (version 2 and 3) ------------------------- */

static int cai_itemsize(PyObject *typestr, uint64_t *out)
{
  const char *s = typestr ? PyUnicode_AsUTF8AndSize(typestr, NULL) : NULL;
  if (!s)
    return -1;
  unsigned long v = 0;
  size_t n = strlen(s);
  for (size_t i = 2; i < n && s[i] >= '0' && s[i] <= '9' && v < 1u << 20; i++)
    v = v * 10 + (unsigned long)(s[i] - '0');
  if (n < 3 || v == 0) {
    hp_raise_msg(hipObjS3InvalidArgument, "__cuda_array_interface__: "
                 "unknown typestr '%s'", s);
    return -1;
  }
  *out = v;
  return 0;
}

static int cai_ints(PyObject *tuple, int64_t *out, int cap, int *n)
{
  PyObject *seq = PySequence_Tuple(tuple);
  if (!seq)
    return -1;
  Py_ssize_t len = PyTuple_Size(seq);
  int rc = len > cap ? -1 : 0;
  for (Py_ssize_t i = 0; rc == 0 && i < len; i++) {
    out[i] = PyLong_AsLongLong(PyTuple_GetItem(seq, i));
    if (out[i] == -1 && PyErr_Occurred())
      rc = -1;
  }
  Py_DECREF(seq);
  if (len > cap)
    hp_raise_msg(hipObjS3InvalidArgument, "too many dimensions");
  *n = (int)len;
  return rc;
}

static int from_cai(PyObject *obj, bool writable, struct hp_target *t)
{
  int64_t shape[64], strides[64];
  int nd = 0, ns = 0, rc = -1;
  uint64_t item = 0, count = 0;
  PyObject *d = PyObject_GetAttrString(obj, "__cuda_array_interface__");
  if (!d)
    return -1;
  PyObject *data = PyMapping_GetItemString(d, "data");
  PyObject *shp = PyMapping_GetItemString(d, "shape");
  PyObject *typ = PyMapping_GetItemString(d, "typestr");
  PyObject *str = PyMapping_HasKeyString(d, "strides")
                      ? PyMapping_GetItemString(d, "strides")
                      : (Py_INCREF(Py_None), Py_None);
  if (!data || !shp || !typ || !str || cai_itemsize(typ, &item) ||
      cai_ints(shp, shape, 64, &nd) ||
      (str != Py_None && cai_ints(str, strides, 64, &ns)))
    goto out;
  for (int i = 0; str != Py_None && i < ns; i++) {
    if (strides[i] % (int64_t)item) {
      hp_raise_msg(hipObjS3InvalidArgument, "odd strides");
      goto out;
    }
    strides[i] /= (int64_t)item;
  }
  if ((str != Py_None && ns != nd) ||
      !compact(nd, shape, str != Py_None ? strides : NULL, &count)) {
    hp_raise_msg(hipObjS3InvalidArgument, "the __cuda_array_interface__ "
                 "array is not contiguous");
    goto out;
  }
  PyObject *addr = PyTuple_Check(data) && PyTuple_Size(data) == 2
                       ? PyTuple_GetItem(data, 0) : NULL;
  int readonly = addr ? PyObject_IsTrue(PyTuple_GetItem(data, 1)) : -1;
  if (!addr || readonly < 0) {
    if (!PyErr_Occurred())
      hp_raise_msg(hipObjS3InvalidArgument, "__cuda_array_interface__: "
                   "'data' is not (pointer, read_only)");
    goto out;
  }
  if (writable && readonly) {
    hp_raise_msg(hipObjS3InvalidArgument, "the target is read-only");
    goto out;
  }
  t->ptr = PyLong_AsVoidPtr(addr);
  if (PyErr_Occurred() || size_of(count, item, &t->size))
    goto out;
  t->mem = hipObjS3MemDevice;
  t->device_type = DL_CUDA;
  t->device_id = -1;
  t->kind = "cuda_array_interface";
  rc = 0;
out:
  Py_XDECREF(data);
  Py_XDECREF(shp);
  Py_XDECREF(typ);
  Py_XDECREF(str);
  Py_DECREF(d);
  return rc;
}

/* ---- the buffer protocol ------------------------------------------------ */

static int from_buffer(PyObject *obj, bool writable, struct hp_target *t)
{
  int flags = PyBUF_ANY_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj, &t->view, flags))
    return -1;
  t->has_view = true;
  t->ptr = t->view.buf;
  t->size = (size_t)t->view.len;
  t->mem = hipObjS3MemHost;
  t->device_type = DL_CPU;
  t->kind = "buffer";
  return 0;
}

/* 1 if obj has the attribute, 0 if not (AttributeError), -1 with the
 * exception of a property that failed otherwise (it is the target's own
 * code: its RuntimeError, say, is the caller's to see). */
static int has_attr(PyObject *obj, const char *name)
{
  PyObject *a = PyObject_GetAttrString(obj, name);
  if (a) {
    Py_DECREF(a);
    return 1;
  }
  if (!PyErr_ExceptionMatches(PyExc_AttributeError))
    return -1;
  PyErr_Clear();
  return 0;
}

int hp_target_get(PyObject *obj, bool writable, struct hp_target *t)
{
  memset(t, 0, sizeof *t);
  int rc, dlpack = 0, cai = 0;
  if (PyObject_CheckBuffer(obj))
    rc = from_buffer(obj, writable, t);
  else if ((dlpack = has_attr(obj, "__dlpack__")) < 0)
    return -1;
  else if (dlpack)
    rc = from_dlpack(obj, writable, t);
  else if ((cai = has_attr(obj, "__cuda_array_interface__")) < 0)
    return -1;
  else if (cai)
    rc = from_cai(obj, writable, t);
  else {
    PyErr_Format(PyExc_TypeError, "%s target: expected an object with the "
                 "buffer protocol (bytearray, memoryview, numpy.ndarray), "
                 "__dlpack__ or __cuda_array_interface__",
                 writable ? "a writable" : "a");
    return -1;
  }
  if (rc) {
    hp_target_release(t);
    return -1;
  }
  Py_INCREF(obj);
  t->owner = obj;
  return 0;
}

/* A producer's deleter may run Python code, which must not see the
 * exception of a failed call: it is kept aside meanwhile. */
void hp_target_release(struct hp_target *t)
{
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (t->has_view)
    PyBuffer_Release(&t->view);
  if (t->managed && t->versioned) {
    dl_managed_v *v = t->managed;
    if (v->deleter)
      v->deleter(v);
  } else if (t->managed) {
    dl_managed *m = t->managed;
    if (m->deleter)
      m->deleter(m);
  }
  Py_XDECREF(t->capsule);
  Py_XDECREF(t->owner);
  memset(t, 0, sizeof *t);
  PyErr_Restore(type, value, tb);
}

/* DLPack and __cuda_array_interface__ describe memory at one moment; a
 * producer may move it later (torch's resize_() frees the old storage).
 * Exported again after the transfer, the target must be where it was. */
int hp_target_check_moved(const struct hp_target *t, bool writable)
{
  if (!t->owner || t->has_view)
    return 0; /* the buffer protocol: the export keeps the memory */
  struct hp_target now;
  if (hp_target_get(t->owner, writable, &now))
    return -1;
  bool moved = now.ptr != t->ptr || now.size != t->size;
  hp_target_release(&now);
  if (moved) {
    PyErr_SetString(PyExc_RuntimeError,
                    "the target's memory moved during the transfer (was it "
                    "resized?): the transfer used memory its owner may have "
                    "freed; do not resize a target while it transfers");
    return -1;
  }
  return 0;
}
