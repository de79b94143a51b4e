/* SPDX-License-Identifier: MIT */
/* Registered memory of include/hipobj_server.h: the caller's or allocated,
 * registered with every engine's device for local access (the source of a
 * GET's RDMA WRITEs, the sink of a PUT's RDMA READs). */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server_internal.h"

#define PAGE 4096u

static void mem_link(hipObjServer_t *s, hipObjServerMem_t *m)
{
  ho_mutex_lock(&s->mu);
  m->next = s->mems;
  if (s->mems)
    s->mems->prev = m;
  s->mems = m;
  ho_mutex_unlock(&s->mu);
}

static void mem_unlink(hipObjServer_t *s, hipObjServerMem_t *m)
{
  ho_mutex_lock(&s->mu);
  if (m->prev)
    m->prev->next = m->next;
  else
    s->mems = m->next;
  if (m->next)
    m->next->prev = m->prev;
  ho_mutex_unlock(&s->mu);
}

/* Deregisters on every engine that registered it and has not yet; false
 * if one refused (that one is kept for a later try: never twice, and
 * freeing the region under the device is worse than leaking it). */
static bool mem_dereg(hipObjServerMem_t *m)
{
  bool ok = true;
  for (uint32_t i = 0; i < m->srv->nengines; i++) {
    if (!m->mrs[i])
      continue;
    if (ho_engine_dereg(m->srv->engines[i], m->mrs[i]) != 0) {
      ho_warn("server: cannot deregister memory: leaked");
      ok = false;
    } else {
      m->mrs[i] = NULL;
    }
  }
  return ok;
}

static void mem_free(hipObjServerMem_t *m)
{
  if (!mem_dereg(m))
    return;
  if (m->owned)
    free(m->addr);
  free(m->mrs);
  free(m->lkeys);
  free(m);
}

static hipObjServerStatus_t mem_new(hipObjServer_t *s, void *addr,
                                    uint64_t len, bool owned,
                                    hipObjServerMem_t **out)
{
  hipObjServerMem_t *m = calloc(1, sizeof *m);
  if (!m)
    return hipObjServerNoMemory;
  m->srv = s;
  m->addr = addr;
  m->len = len;
  m->owned = owned;
  m->mrs = calloc(s->nengines, sizeof *m->mrs);
  m->lkeys = calloc(s->nengines, sizeof *m->lkeys);
  hipObjServerStatus_t st = m->mrs && m->lkeys ? hipObjServerSuccess
                                               : hipObjServerNoMemory;
  for (uint32_t i = 0; st == hipObjServerSuccess && i < s->nengines; i++)
    if (ho_engine_reg(s->engines[i], addr, (size_t)len, &m->mrs[i],
                      &m->lkeys[i]) != hipObjSuccess)
      st = hipObjServerRdmaError;
  if (st != hipObjServerSuccess) {
    m->owned = false; /* the caller frees what it allocated */
    mem_free(m);
    return st;
  }
  mem_link(s, m);
  *out = m;
  return hipObjServerSuccess;
}

hipObjServerStatus_t hipObjServerRegister(hipObjServer_t *srv, void *addr,
                                          uint64_t length,
                                          hipObjServerMem_t **mem)
{
  if (!srv || !addr || length == 0 || length > SIZE_MAX || !mem)
    return hipObjServerInvalidValue;
  return mem_new(srv, addr, length, false, mem);
}

hipObjServerStatus_t hipObjServerAlloc(hipObjServer_t *srv, uint64_t length,
                                       hipObjServerMem_t **mem)
{
  if (!srv || length == 0 || length > SIZE_MAX - PAGE || !mem)
    return hipObjServerInvalidValue;
  size_t bytes = ((size_t)length + PAGE - 1) & ~(size_t)(PAGE - 1);
  void *p = aligned_alloc(PAGE, bytes);
  if (!p)
    return hipObjServerNoMemory;
  memset(p, 0, bytes);
  hipObjServerStatus_t st = mem_new(srv, p, length, true, mem);
  if (st != hipObjServerSuccess)
    free(p);
  return st;
}

void *hipObjServerMemAddress(const hipObjServerMem_t *mem)
{
  return mem ? mem->addr : NULL;
}

uint64_t hipObjServerMemLength(const hipObjServerMem_t *mem)
{
  return mem ? mem->len : 0;
}

hipObjServerStatus_t ho_server_mem_use(hipObjServer_t *srv,
                                       hipObjServerMem_t *mem)
{
  if (mem->srv != srv || mem->dying)
    return hipObjServerInvalidValue;
  atomic_fetch_add(&mem->users, 1);
  return hipObjServerSuccess;
}

/* The check for users and the mark that stops new ones are one step under
 * the server's lock, so no Start takes a use between them; the devices are
 * called outside it. */
hipObjServerStatus_t hipObjServerDeregister(hipObjServerMem_t *mem)
{
  if (!mem)
    return hipObjServerInvalidValue;
  hipObjServer_t *s = mem->srv;
  ho_mutex_lock(&s->mu);
  bool busy = atomic_load(&mem->users) > 0 || mem->deregistering;
  if (!busy)
    mem->dying = mem->deregistering = true;
  ho_mutex_unlock(&s->mu);
  if (busy)
    return hipObjServerBusy;
  ho_server_hook(s, HO_SERVER_AT_DEREGISTER, mem);
  if (!mem_dereg(mem)) { /* stays dying: some of it is deregistered */
    ho_mutex_lock(&s->mu);
    mem->deregistering = false;
    ho_mutex_unlock(&s->mu);
    return hipObjServerRdmaError;
  }
  mem_unlink(s, mem);
  mem_free(mem);
  return hipObjServerSuccess;
}

void ho_server_mem_free_all(hipObjServer_t *srv)
{
  ho_mutex_lock(&srv->mu);
  hipObjServerMem_t *m = srv->mems;
  srv->mems = NULL;
  ho_mutex_unlock(&srv->mu);
  while (m) {
    hipObjServerMem_t *next = m->next;
    mem_free(m);
    m = next;
  }
}
