/* SPDX-License-Identifier: MIT */
/* The null tables of the verbs and topology seams: every entry present, and
 * every entry says "not supported" (verbs: NULL or EOPNOTSUPP, as libibverbs
 * reports it). A partial implementation or a fake starts from them, so
 * nothing it leaves out is a NULL call (rdma-core's verbs_dummy_ops). The
 * GPU seam's null table is in gpu_none.c, which shares most of its entries.
 *
 * The tables here, and every other ops table of src/platform and
 * tests/fakes, are initialised by position, not by name, on purpose: an
 * entry added to a struct and missing from a table is then a compiler
 * warning (-Wmissing-field-initializers, an error with HIPOBJ_WERROR), not
 * a NULL pointer found at run time. */
#include <errno.h>

#include "platform/topology.h"
#include "platform/verbs.h"

/* ---- verbs -------------------------------------------------------------- */

static void *null_ptr(void)
{
  errno = EOPNOTSUPP;
  return NULL;
}

static struct ibv_device **null_get_device_list(int *num)
{
  if (num)
    *num = 0;
  return null_ptr();
}

static void null_free_device_list(struct ibv_device **list) {}

static const char *null_get_device_name(struct ibv_device *dev)
{
  return null_ptr();
}

static struct ibv_context *null_open_device(struct ibv_device *dev)
{
  return null_ptr();
}

static int null_close_device(struct ibv_context *ctx) { return EOPNOTSUPP; }

static int null_query_device(struct ibv_context *ctx,
                             struct ibv_device_attr *attr)
{
  return EOPNOTSUPP;
}

static int null_query_port(struct ibv_context *ctx, uint8_t port,
                           struct ibv_port_attr *attr)
{
  return EOPNOTSUPP;
}

static int null_query_gid(struct ibv_context *ctx, uint8_t port, int index,
                          union ibv_gid *gid)
{
  errno = EOPNOTSUPP;
  return -1; /* ibv_query_gid: -1 and errno */
}

static struct ibv_pd *null_alloc_pd(struct ibv_context *ctx)
{
  return null_ptr();
}

static int null_dealloc_pd(struct ibv_pd *pd) { return EOPNOTSUPP; }

static struct ibv_mr *null_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
                                  int access)
{
  return null_ptr();
}

static struct ibv_mr *null_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
                                         size_t len, uint64_t iova, int fd,
                                         int access)
{
  return null_ptr();
}

static int null_dereg_mr(struct ibv_mr *mr) { return EOPNOTSUPP; }

static struct ibv_cq *null_create_cq(struct ibv_context *ctx, int cqe,
                                     void *cq_ctx,
                                     struct ibv_comp_channel *ch, int vector)
{
  return null_ptr();
}

static int null_destroy_cq(struct ibv_cq *cq) { return EOPNOTSUPP; }

static struct ibv_qp *null_create_qp(struct ibv_pd *pd,
                                     struct ibv_qp_init_attr *attr)
{
  return null_ptr();
}

static int null_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                          int mask)
{
  return EOPNOTSUPP;
}

static int null_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
                         int mask, struct ibv_qp_init_attr *init)
{
  return EOPNOTSUPP;
}

static int null_destroy_qp(struct ibv_qp *qp) { return EOPNOTSUPP; }

static int null_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
                          struct ibv_send_wr **bad)
{
  if (bad)
    *bad = wr;
  return EOPNOTSUPP;
}

static int null_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                          struct ibv_recv_wr **bad)
{
  if (bad)
    *bad = wr;
  return EOPNOTSUPP;
}

static int null_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
  return -EOPNOTSUPP; /* ibv_poll_cq: negative on failure */
}

static struct ibv_mw *null_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
  return null_ptr();
}

static int null_dealloc_mw(struct ibv_mw *mw) { return EOPNOTSUPP; }

static struct ibv_comp_channel *null_create_comp_channel(struct ibv_context *ctx)
{
  return null_ptr();
}

static int null_destroy_comp_channel(struct ibv_comp_channel *ch)
{
  return EOPNOTSUPP;
}

static int null_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
  return EOPNOTSUPP;
}

static int null_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
                             void **cq_ctx)
{
  errno = EOPNOTSUPP;
  return -1;
}

static void null_ack_cq_events(struct ibv_cq *cq, unsigned int nevents) {}

const struct ho_verbs_ops ho_verbs_null_ops = {
    "null",
    null_get_device_list,
    null_free_device_list,
    null_get_device_name,
    null_open_device,
    null_close_device,
    null_query_device,
    null_query_port,
    null_query_gid,
    null_alloc_pd,
    null_dealloc_pd,
    null_reg_mr,
    null_reg_dmabuf_mr,
    null_dereg_mr,
    null_create_cq,
    null_destroy_cq,
    null_create_qp,
    null_modify_qp,
    null_query_qp,
    null_destroy_qp,
    null_post_send,
    null_post_recv,
    null_poll_cq,
    null_alloc_mw,
    null_dealloc_mw,
    null_create_comp_channel,
    null_destroy_comp_channel,
    null_req_notify_cq,
    null_get_cq_event,
    null_ack_cq_events,
};

/* ---- topology ----------------------------------------------------------- */

static hipObjOpError_t null_list_nics(const struct ho_topology *t,
                                      struct ho_nic_info *out, size_t cap,
                                      size_t *count)
{
  return hipObjNotSupported;
}

static enum ho_gid_type null_gid_type(const struct ho_topology *t,
                                      const char *nic, int port, int index)
{
  return HO_GID_UNKNOWN;
}

static hipObjOpError_t null_pci_device(const struct ho_topology *t,
                                       const char *bus_id,
                                       struct ho_pci_info *out)
{
  return hipObjNotSupported;
}

static hipObjOpError_t null_list_gpus(const struct ho_topology *t,
                                      struct ho_pci_info *out, size_t cap,
                                      size_t *count)
{
  return hipObjNotSupported;
}

static int null_cpu_numa_node(const struct ho_topology *t) { return -1; }

static hipObjOpError_t null_pin_limits(const struct ho_topology *t,
                                       struct ho_pin_limits *out)
{
  return hipObjNotSupported;
}

static hipObjOpError_t null_hw_counter(const struct ho_topology *t,
                                       const char *nic, int port,
                                       const char *name,
                                       unsigned long long *out)
{
  return hipObjNotSupported;
}

const struct ho_topology_ops ho_topology_null_ops = {
    null_list_nics,
    null_gid_type,
    null_pci_device,
    null_list_gpus,
    null_cpu_numa_node,
    null_pin_limits,
    null_hw_counter,
};
