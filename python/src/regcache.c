/* SPDX-License-Identifier: MIT */
/* The registration cache of a client: memory registered with hipObject
 * once per Python object and kept while that object lives. Each entry holds
 * a weak reference to its object; when the object dies, the callback
 * deregisters the memory. Everything here runs under the GIL.
 *
 * The glue uses a registration it finds at a buffer's start address, so a
 * stale one must never stay at an address other memory may take: before
 * each transfer, an entry of the same object at another address or of
 * smaller size, and an entry of another object at the same address, are
 * released. */
#include <stdlib.h>
#include <string.h>

#include "hipobj_py.h"

struct hp_entry {
  PyObject *wr; /* weak reference to the owner, with our callback */
  char *addr;
  size_t size;
};

struct hp_cache {
  unsigned cap, n;
  struct hp_entry *e;
  unsigned n_stuck;  /* deregistrations refused (busy), retried later */
  char *stuck[16];
};

static const char capsule_name[] = "hipobj._regcache";

static struct hp_cache *cache_of(PyObject *capsule)
{
  return PyCapsule_GetPointer(capsule, capsule_name);
}

static void deregister(struct hp_cache *c, char *addr)
{
  hipObjError_t e = hipObjBufDeregister(addr);
  if (e.opError == hipObjBusy && c->n_stuck < 16)
    c->stuck[c->n_stuck++] = addr;
}

static void retry_stuck(struct hp_cache *c)
{
  unsigned n = c->n_stuck;
  c->n_stuck = 0;
  for (unsigned i = 0; i < n; i++)
    deregister(c, c->stuck[i]);
}

/* Releases entry i: its registration and its weak reference. */
static void drop(struct hp_cache *c, unsigned i)
{
  struct hp_entry e = c->e[i];
  c->e[i] = c->e[--c->n];
  deregister(c, e.addr);
  Py_XDECREF(e.wr);
}

/* The weak reference's callback: its object died. */
static PyObject *on_dead(PyObject *capsule, PyObject *wr)
{
  struct hp_cache *c = cache_of(capsule);
  for (unsigned i = 0; c && i < c->n; i++)
    if (c->e[i].wr == wr) {
      drop(c, i);
      break;
    }
  Py_RETURN_NONE;
}

static PyMethodDef on_dead_def = {"_registration_released",
                                  (PyCFunction)on_dead, METH_O, NULL};

static void destroy(PyObject *capsule)
{
  struct hp_cache *c = cache_of(capsule);
  if (!c)
    return;
  while (c->n)
    drop(c, c->n - 1);
  free(c->e);
  free(c);
}

PyObject *hp_cache_new(unsigned cap)
{
  struct hp_cache *c = calloc(1, sizeof *c);
  if (c)
    c->e = calloc(cap, sizeof *c->e);
  if (!c || !c->e) {
    free(c);
    return PyErr_NoMemory();
  }
  c->cap = cap;
  PyObject *capsule = PyCapsule_New(c, capsule_name, destroy);
  if (!capsule) {
    free(c->e);
    free(c);
  }
  return capsule;
}

/* 1: a usable entry for t exists. Drops the stale ones. */
static int sweep(struct hp_cache *c, const struct hp_target *t)
{
  int usable = 0;
  for (unsigned i = c->n; i-- > 0;) {
    PyObject *who = PyWeakref_GetObject(c->e[i].wr);
    bool mine = who == t->owner;
    if (mine && c->e[i].addr == t->ptr && c->e[i].size >= t->size)
      usable = 1;
    else if (mine || c->e[i].addr == t->ptr)
      drop(c, i);
  }
  return usable;
}

int hp_cache_prepare(PyObject *capsule, const struct hp_target *t)
{
  struct hp_cache *c = cache_of(capsule);
  if (!c)
    return -1;
  if (c->n_stuck)
    retry_stuck(c);
  if (sweep(c, t) || c->n == c->cap || t->size == 0 ||
      t->size > HIPOBJ_MAX_BUFFER_SIZE)
    return 0;
  PyObject *cb = PyCFunction_New(&on_dead_def, capsule);
  if (!cb)
    return -1;
  PyObject *wr = PyWeakref_NewRef(t->owner, cb);
  Py_DECREF(cb);
  if (!wr) { /* bytearray, bytes: no weak references; the glue registers */
    PyErr_Clear();
    return 0;
  }
  hipObjError_t e = t->mem == hipObjS3MemDevice
                        ? hipObjBufRegister(t->ptr, t->size)
                        : hipObjBufRegisterHost(t->ptr, t->size);
  if (e.opError != hipObjSuccess) { /* the glue tries and reports it */
    Py_DECREF(wr);
    return 0;
  }
  c->e[c->n++] = (struct hp_entry){wr, t->ptr, t->size};
  return 0;
}

void hp_cache_clear(PyObject *capsule)
{
  struct hp_cache *c = cache_of(capsule);
  if (!c)
    return;
  while (c->n)
    drop(c, c->n - 1);
  retry_stuck(c);
}

Py_ssize_t hp_cache_count(PyObject *capsule)
{
  struct hp_cache *c = cache_of(capsule);
  return c ? (Py_ssize_t)c->n : 0;
}
