/* SPDX-License-Identifier: MIT */
/* hipobj.TransferResult: what a transfer did, and which path moved the
 * bytes. */
#include <stdio.h>

#include "hipobj_py.h"

static PyTypeObject *result_type;

static const char *path_of(const hipObjS3Result_t *r)
{
  if (r->partsRdma && r->partsHttp)
    return "mixed";
  return r->partsRdma ? "rdma" : r->partsHttp ? "http" : "none";
}

static const char *reason_of(hipObjS3Fallback_t f)
{
  switch (f) {
  case hipObjS3FallbackDisabled: return "disabled";
  case hipObjS3FallbackNoRdma: return "no-rdma";
  case hipObjS3FallbackDeclined: return "declined";
  default: return NULL;
  }
}

/* Why bytes fell back: the glue's message, else why the client has no
 * RDMA. */
static void fallback_text(const hipObjS3Client_t *c, const hipObjS3Result_t *r,
                          char *out, size_t cap)
{
  out[0] = '\0';
  if (!r->fellBack)
    return;
  if (r->message[0])
    snprintf(out, cap, "%s", r->message);
  else
    hipObjS3ClientRdma(c, out, cap, NULL);
}

PyObject *hp_result_new(const hipObjS3Client_t *c, const hipObjS3Result_t *r,
                        const char *kind)
{
  char why[HIPOBJ_S3_MESSAGE_LEN];
  PyObject *res = PyStructSequence_New(result_type);
  if (!res)
    return NULL;
  fallback_text(c, r, why, sizeof why);
  const char *reason = reason_of(r->fallbackReason);
  PyObject *v[] = {
      PyLong_FromUnsignedLongLong(r->bytes),
      PyUnicode_FromString(path_of(r)),
      PyLong_FromUnsignedLong(r->partsRdma),
      PyLong_FromUnsignedLong(r->partsHttp),
      PyBool_FromLong(r->fellBack),
      reason ? PyUnicode_FromString(reason) : (Py_INCREF(Py_None), Py_None),
      PyUnicode_FromString(r->etag),
      PyLong_FromUnsignedLongLong(r->objectSize),
      PyUnicode_FromString(kind ? kind : ""),
      PyUnicode_FromString(why),
  };
  for (Py_ssize_t i = 0; i < (Py_ssize_t)(sizeof v / sizeof v[0]); i++) {
    if (!v[i]) {
      Py_DECREF(res);
      for (Py_ssize_t j = i + 1; j < (Py_ssize_t)(sizeof v / sizeof v[0]); j++)
        Py_XDECREF(v[j]);
      return NULL;
    }
    PyStructSequence_SetItem(res, i, v[i]);
  }
  return res;
}

static PyStructSequence_Field result_fields[] = {
    {"bytes", "payload bytes moved"},
    {"path", "'rdma', 'http', 'mixed' (some parts each way) or 'none'"},
    {"parts_rdma", "ranges or parts moved by RDMA"},
    {"parts_http", "ranges or parts moved by plain HTTP"},
    {"fell_back", "whether some bytes moved by plain HTTP as a fallback"},
    {"fallback_reason", "None, 'disabled', 'no-rdma' or 'declined'"},
    {"etag", "the ETag, when the server gave one"},
    {"object_size", "GET: the object's size"},
    {"target", "how the memory was found: 'buffer', 'dlpack', "
               "'cuda_array_interface'"},
    {"message", "why bytes fell back, else ''"},
    {NULL, NULL}};

static PyStructSequence_Desc result_desc = {
    "hipobj.TransferResult", "What a transfer did and which path moved the "
    "bytes.", result_fields, 10};

int hp_result_add(PyObject *module)
{
  result_type = PyStructSequence_NewType(&result_desc);
  if (!result_type)
    return -1;
  Py_INCREF((PyObject *)result_type);
  if (PyModule_AddObject(module, "TransferResult", (PyObject *)result_type)) {
    Py_DECREF((PyObject *)result_type);
    return -1;
  }
  return 0;
}
