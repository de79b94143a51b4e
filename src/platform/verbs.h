/* SPDX-License-Identifier: MIT */
/* The verbs seam: every libibverbs call the library makes goes through one of
 * these tables. Types come from the real <infiniband/verbs.h>; the library
 * never links libibverbs. Semantics of each entry are those of the libibverbs
 * function of the same name (NULL/errno or an errno return value). */
#ifndef HO_PLATFORM_VERBS_H
#define HO_PLATFORM_VERBS_H

#include <infiniband/verbs.h>

struct ho_verbs_ops {
  const char *name;
  struct ibv_device **(*get_device_list)(int *num);
  void (*free_device_list)(struct ibv_device **list);
  const char *(*get_device_name)(struct ibv_device *dev);
  struct ibv_context *(*open_device)(struct ibv_device *dev);
  int (*close_device)(struct ibv_context *ctx);
  int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
  int (*query_port)(struct ibv_context *ctx, uint8_t port,
                    struct ibv_port_attr *attr);
  int (*query_gid)(struct ibv_context *ctx, uint8_t port, int index,
                   union ibv_gid *gid);
  struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
  int (*dealloc_pd)(struct ibv_pd *pd);
  struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len,
                           int access);
  /* NULL when libibverbs is older than rdma-core 34. */
  struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
                                  size_t len, uint64_t iova, int fd,
                                  int access);
  int (*dereg_mr)(struct ibv_mr *mr);
  struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_ctx,
                              struct ibv_comp_channel *ch, int vector);
  int (*destroy_cq)(struct ibv_cq *cq);
  struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
                              struct ibv_qp_init_attr *attr);
  int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
  int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
                  struct ibv_qp_init_attr *init);
  int (*destroy_qp)(struct ibv_qp *qp);
  /* The hot path: inline in the real header, through the context's ops. */
  int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
                   struct ibv_send_wr **bad);
  int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                   struct ibv_recv_wr **bad);
  int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
  /* Memory windows: inline in the real header too, through the context's
   * ops (NULL + EOPNOTSUPP where the provider has none). Binding a type-2
   * window and invalidating it are post_send work requests
   * (IBV_WR_BIND_MW, IBV_WR_LOCAL_INV). */
  struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
  int (*dealloc_mw)(struct ibv_mw *mw);
  /* Completion channels, for waits that block (docs/architecture.md, "Wait
   * policy"): a CQ created on a channel, once armed by req_notify_cq
   * (inline in the real header, through the context's ops), raises one
   * event on the channel's fd at its next completion; get_cq_event reads
   * it (EAGAIN-style -1 on an O_NONBLOCK fd with none), and every event
   * read must be acknowledged (ack_cq_events, in batches) before the CQ
   * is destroyed. */
  struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *ctx);
  int (*destroy_comp_channel)(struct ibv_comp_channel *ch);
  int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
  int (*get_cq_event)(struct ibv_comp_channel *ch, struct ibv_cq **cq,
                      void **cq_ctx);
  void (*ack_cq_events)(struct ibv_cq *cq, unsigned int nevents);
};

/* The null table (null_ops.c): every entry present, each failing as its
 * libibverbs function reports "not supported" (NULL and errno EOPNOTSUPP,
 * or EOPNOTSUPP returned; poll_cq returns -EOPNOTSUPP). */
extern const struct ho_verbs_ops ho_verbs_null_ops;

/* libibverbs.so.1 through dlopen, loaded on the first call and never
 * unloaded. NULL if the library is not installed (quietly) or a required
 * symbol is missing (with one line on stderr). Thread-safe. */
const struct ho_verbs_ops *ho_verbs_system(void);

#endif
