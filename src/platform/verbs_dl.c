/* SPDX-License-Identifier: MIT */
/* libibverbs.so.1 through dlopen(). The library is opened by its soname on
 * the first call of ho_verbs_system() and stays loaded for the life of the
 * process. Every function looked up is listed once, in HO_VERBS_SYMBOLS;
 * the list is expanded into the struct of pointers and into the loader, and
 * each pointer's type is taken from the declaration in <infiniband/verbs.h>
 * itself, so a signature cannot drift from the header we build against.
 *
 * Nothing here calls an exported libibverbs function directly: the only
 * calls are through looked-up pointers or through the context's ops (the
 * header's static inline functions ibv_post_send, ibv_post_recv,
 * ibv_poll_cq, ibv_alloc_mw, ibv_dealloc_mw, ibv_req_notify_cq and
 * verbs_get_ctx), so the library needs no link to
 * libibverbs. */
#include "platform/verbs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "common/log.h"
#include "platform/sonames.h"

#define REQUIRED true
#define OPTIONAL false

/* X(name, required): the exported symbol is "ibv_" #name. ibv_query_port and
 * ibv_reg_mr are also function-like macros in the header; as `ibv_##name`
 * below is never followed by '(', the macros do not expand and the types
 * are those of the exported functions (query_port takes the compat struct). */
#define HO_VERBS_SYMBOLS(X)                                                    \
  X(get_device_list, REQUIRED)                                                 \
  X(free_device_list, REQUIRED)                                                \
  X(get_device_name, REQUIRED)                                                 \
  X(open_device, REQUIRED)                                                     \
  X(close_device, REQUIRED)                                                    \
  X(query_device, REQUIRED)                                                    \
  X(query_port, REQUIRED)                                                      \
  X(query_gid, REQUIRED)                                                       \
  X(alloc_pd, REQUIRED)                                                        \
  X(dealloc_pd, REQUIRED)                                                      \
  X(reg_mr, REQUIRED)                                                          \
  X(reg_dmabuf_mr, OPTIONAL) /* rdma-core 34 and later */                      \
  X(dereg_mr, REQUIRED)                                                        \
  X(create_cq, REQUIRED)                                                       \
  X(destroy_cq, REQUIRED)                                                      \
  X(create_qp, REQUIRED)                                                       \
  X(modify_qp, REQUIRED)                                                       \
  X(query_qp, REQUIRED)                                                        \
  X(destroy_qp, REQUIRED)                                                       \
  X(create_comp_channel, REQUIRED)                                             \
  X(destroy_comp_channel, REQUIRED)                                            \
  X(get_cq_event, REQUIRED)                                                    \
  X(ack_cq_events, REQUIRED)

struct ho_verbs_syms {
#define HO_VERBS_FIELD(name, required) __typeof__(&ibv_##name) name;
  HO_VERBS_SYMBOLS(HO_VERBS_FIELD)
#undef HO_VERBS_FIELD
};

static struct ho_verbs_syms syms;        /* written once, under load_once */
static struct ho_verbs_ops verbs_table;  /* likewise */
static const struct ho_verbs_ops *loaded; /* NULL: not available */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* ---- entries that are not plain forwards ------------------------------ */

/* As the header's inline ibv_query_port(): the provider's extended entry
 * when the context has one, else the exported function, which takes the
 * compat struct, a prefix of struct ibv_port_attr (zeroed first, so the
 * fields it does not know read 0). */
static int ho_verbs_query_port(struct ibv_context *ctx, uint8_t port,
                               struct ibv_port_attr *attr)
{
  struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);
  if (vctx)
    return vctx->query_port(ctx, port, attr, sizeof *attr);
  memset(attr, 0, sizeof *attr);
  return syms.query_port(ctx, port, (struct _compat_ibv_port_attr *)attr);
}

static int ho_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
                              struct ibv_send_wr **bad)
{
  return ibv_post_send(qp, wr, bad);
}

static int ho_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                              struct ibv_recv_wr **bad)
{
  return ibv_post_recv(qp, wr, bad);
}

static int ho_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
  return ibv_poll_cq(cq, n, wc);
}

/* Inline in the header (the context's ops), so not in HO_VERBS_SYMBOLS:
 * ibv_alloc_mw sets EOPNOTSUPP itself when the provider has no entry. */
static struct ibv_mw *ho_verbs_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
  return ibv_alloc_mw(pd, type);
}

static int ho_verbs_dealloc_mw(struct ibv_mw *mw)
{
  return ibv_dealloc_mw(mw);
}

static int ho_verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
  return ibv_req_notify_cq(cq, solicited_only);
}

/* ---- loading ------------------------------------------------------------ */

/* Looks up every symbol of the list; false if a required one is missing. */
static bool resolve_symbols(void *lib, struct ho_verbs_syms *s)
{
  void *p;
#define HO_VERBS_LOAD(name, required)                                          \
  p = dlsym(lib, "ibv_" #name);                                                \
  if (!p && (required)) {                                                      \
    ho_warn("%s lacks the required symbol ibv_" #name "; RDMA is disabled",   \
            HO_VERBS_SONAME);                                                  \
    return false;                                                              \
  }                                                                            \
  s->name = (__typeof__(s->name))p;
  HO_VERBS_SYMBOLS(HO_VERBS_LOAD)
#undef HO_VERBS_LOAD
  return true;
}

static void fill_table(const struct ho_verbs_syms *s, struct ho_verbs_ops *o)
{
  o->name = "libibverbs";
  o->get_device_list = s->get_device_list;
  o->free_device_list = s->free_device_list;
  o->get_device_name = s->get_device_name;
  o->open_device = s->open_device;
  o->close_device = s->close_device;
  o->query_device = s->query_device;
  o->query_port = ho_verbs_query_port;
  o->query_gid = s->query_gid;
  o->alloc_pd = s->alloc_pd;
  o->dealloc_pd = s->dealloc_pd;
  o->reg_mr = s->reg_mr;
  o->reg_dmabuf_mr = s->reg_dmabuf_mr;
  o->dereg_mr = s->dereg_mr;
  o->create_cq = s->create_cq;
  o->destroy_cq = s->destroy_cq;
  o->create_qp = s->create_qp;
  o->modify_qp = s->modify_qp;
  o->query_qp = s->query_qp;
  o->destroy_qp = s->destroy_qp;
  o->post_send = ho_verbs_post_send;
  o->post_recv = ho_verbs_post_recv;
  o->poll_cq = ho_verbs_poll_cq;
  o->alloc_mw = ho_verbs_alloc_mw;
  o->dealloc_mw = ho_verbs_dealloc_mw;
  o->create_comp_channel = s->create_comp_channel;
  o->destroy_comp_channel = s->destroy_comp_channel;
  o->req_notify_cq = ho_verbs_req_notify_cq;
  o->get_cq_event = s->get_cq_event;
  o->ack_cq_events = s->ack_cq_events;
}

static void load_libibverbs(void)
{
  void *lib = dlopen(HO_VERBS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    /* Not installed: RDMA is simply not supported here. */
    const char *why = dlerror();
    ho_debug("%s not loaded: %s", HO_VERBS_SONAME, why ? why : "?");
    return;
  }
  struct ho_verbs_syms s;
  memset(&s, 0, sizeof s);
  if (!resolve_symbols(lib, &s)) {
    dlclose(lib); /* nothing from it escaped */
    return;
  }
  syms = s;
  fill_table(&syms, &verbs_table);
  loaded = &verbs_table; /* the handle is never closed */
}

const struct ho_verbs_ops *ho_verbs_system(void)
{
  if (pthread_once(&load_once, load_libibverbs) != 0)
    return NULL;
  return loaded;
}
