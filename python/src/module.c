/* SPDX-License-Identifier: MIT */
/* hipobj._core: the module. The Python package hipobj re-exports it. */
#include "hipobj_py.h"

static PyObject *library_version(PyObject *mod, PyObject *unused)
{
  return PyUnicode_FromString(hipObjGetVersionString());
}

static PyObject *rdma_live(PyObject *mod, PyObject *unused)
{
  return PyBool_FromLong(hp_glue_rdma_live());
}

static PyMethodDef functions[] = {
    {"library_version", library_version, METH_NOARGS,
     "library_version() -> str\n--\n\nThe version of libhipobj in use."},
    {"_rdma_live", rdma_live, METH_NOARGS,
     "_rdma_live() -> bool\n--\n\nWhether a client that can use RDMA is "
     "alive in this process\n(hipObject's instance is up): hipobj._procs "
     "asks before a fork."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "hipobj._core",
    "S3 objects by RDMA into host or GPU memory, on libhipobj_s3.", -1,
    functions, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void);

#ifdef HIPOBJ_PY_FABRIC
/* python/tests/fabric/fabric_module.c: only in the fabric test build. */
extern PyMethodDef hp_fabric_functions[];
#endif

PyMODINIT_FUNC PyInit__core(void)
{
  PyObject *m = PyModule_Create(&module_def);
  if (!m)
    return NULL;
#ifdef HIPOBJ_PY_FABRIC
  if (PyModule_AddFunctions(m, hp_fabric_functions)) {
    Py_DECREF(m);
    return NULL;
  }
#endif
  if (hp_errors_add(m) || hp_result_add(m) || hp_client_add(m)) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
