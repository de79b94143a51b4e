/* SPDX-License-Identifier: MIT */
/* The exception hierarchy, one class per hipObjS3Status_t, mapped once
 * here. Every exception carries the glue's status, its name, the HTTP
 * status, the S3 error code, the hipObject error and the message. */
#include <stdarg.h>
#include <stdio.h>

#include "hipobj_py.h"

#define N_STATUS 16

static PyObject *by_status[N_STATUS]; /* hipObjS3Status_t -> class */
static PyObject *error_base;

struct exc_def {
  const char *name; /* in the module */
  int status;       /* -1: an intermediate class */
  const char *parent; /* NULL: Error */
  PyObject **builtin; /* a second base, or NULL */
  const char *doc;
};

static int add_one(PyObject *module, const struct exc_def *d)
{
  char qual[96];
  PyObject *parent = d->parent ? PyObject_GetAttrString(module, d->parent)
                               : (Py_INCREF(error_base), error_base);
  if (!parent)
    return -1;
  PyObject *bases = d->builtin ? PyTuple_Pack(2, parent, *d->builtin)
                               : PyTuple_Pack(1, parent);
  Py_DECREF(parent);
  if (!bases)
    return -1;
  snprintf(qual, sizeof qual, "hipobj.%s", d->name);
  PyObject *cls = PyErr_NewExceptionWithDoc(qual, d->doc, bases, NULL);
  Py_DECREF(bases);
  if (!cls)
    return -1;
  if (d->status >= 0) {
    Py_INCREF(cls);
    by_status[d->status] = cls;
  }
  return PyModule_AddObject(module, d->name, cls) ? (Py_DECREF(cls), -1) : 0;
}

int hp_errors_add(PyObject *module)
{
  static const char base_doc[] =
      "A hipObject S3 operation failed. Attributes: status (the "
      "hipObjS3Status_t value), status_name, http_status, s3_code (e.g. "
      "'NoSuchKey'), rdma_error (the hipObjOpError_t behind an RDMA "
      "failure, else 0), message (what went wrong and what to do).";
  const struct exc_def defs[] = {
      {"InvalidArgument", hipObjS3InvalidArgument, NULL, &PyExc_ValueError,
       "A bad argument, URL or configuration."},
      {"OutOfMemory", hipObjS3OutOfMemory, NULL, &PyExc_MemoryError,
       "Out of memory."},
      {"ConnectFailed", hipObjS3ConnectFailed, NULL, &PyExc_ConnectionError,
       "The endpoint could not be reached."},
      {"NotFound", -1, NULL, &PyExc_FileNotFoundError,
       "No such bucket or key."},
      {"NoSuchBucket", hipObjS3NoSuchBucket, "NotFound", NULL,
       "The bucket does not exist."},
      {"NoSuchKey", hipObjS3NoSuchKey, "NotFound", NULL,
       "The key does not exist."},
      {"AccessDenied", hipObjS3AccessDenied, NULL, &PyExc_PermissionError,
       "HTTP 403: credentials, signature or permission."},
      {"InvalidRange", hipObjS3InvalidRange, NULL, &PyExc_ValueError,
       "The range lies outside the object."},
      {"BufferTooSmall", hipObjS3BufferTooSmall, NULL, &PyExc_ValueError,
       "The object is larger than the target."},
      {"HttpError", hipObjS3HttpError, NULL, NULL,
       "Any other HTTP or S3 error (also a cancelled transfer)."},
      {"ProtocolError", hipObjS3ProtocolError, NULL, NULL,
       "An answer that breaks S3 or hipObject's protocol."},
      {"RdmaUnavailable", hipObjS3RdmaUnavailable, NULL, NULL,
       "RDMA is required (require_rdma=True) and hipObject is not usable."},
      {"RdmaDeclined", hipObjS3RdmaDeclined, "RdmaUnavailable", NULL,
       "RDMA is required and the server declined it (501)."},
      {"RdmaFailed", hipObjS3RdmaFailed, NULL, NULL,
       "Registration or an RDMA transfer failed."},
      {"DeviceError", hipObjS3NoDeviceOps, NULL, NULL,
       "Device memory could not be copied for the plain-HTTP path."},
  };
  error_base = PyErr_NewExceptionWithDoc("hipobj.Error", base_doc,
                                         PyExc_Exception, NULL);
  if (!error_base)
    return -1;
  Py_INCREF(error_base);
  if (PyModule_AddObject(module, "Error", error_base)) {
    Py_DECREF(error_base);
    return -1;
  }
  for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
    if (add_one(module, &defs[i]))
      return -1;
  by_status[hipObjS3DeviceCopyFailed] = by_status[hipObjS3NoDeviceOps];
  Py_XINCREF(by_status[hipObjS3DeviceCopyFailed]);
  return 0;
}

static int set_attr(PyObject *o, const char *name, PyObject *v)
{
  if (!v)
    return -1;
  int rc = PyObject_SetAttrString(o, name, v);
  Py_DECREF(v);
  return rc;
}

static PyObject *raise_with(hipObjS3Status_t st, long http, const char *s3,
                            int rdma_error, const char *message)
{
  PyObject *cls = (unsigned)st < N_STATUS && by_status[st] ? by_status[st]
                                                         : error_base;
  PyObject *exc = PyObject_CallFunction(cls, "s", message);
  if (!exc)
    return NULL;
  if (set_attr(exc, "status", PyLong_FromLong((long)st)) ||
      set_attr(exc, "status_name",
               PyUnicode_FromString(hipObjS3StatusString(st))) ||
      set_attr(exc, "http_status", PyLong_FromLong(http)) ||
      set_attr(exc, "s3_code", PyUnicode_FromString(s3)) ||
      set_attr(exc, "rdma_error", PyLong_FromLong(rdma_error)) ||
      set_attr(exc, "message", PyUnicode_FromString(message))) {
    Py_DECREF(exc);
    return NULL;
  }
  PyErr_SetObject(cls, exc);
  Py_DECREF(exc);
  return NULL;
}

PyObject *hp_raise(const hipObjS3Result_t *r)
{
  return raise_with(r->status, r->httpStatus, r->s3Code, (int)r->rdmaError,
                    r->message[0] ? r->message
                                  : hipObjS3StatusString(r->status));
}

PyObject *hp_raise_msg(hipObjS3Status_t st, const char *fmt, ...)
{
  char msg[HIPOBJ_S3_MESSAGE_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return raise_with(st, 0, "", 0, msg);
}
