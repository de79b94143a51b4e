/* SPDX-License-Identifier: MIT */
/* The null ops tables: every entry is there, and every entry answers "not
 * supported" in its seam's terms, so a fake or a partial implementation
 * built on them fails cleanly where it is incomplete. A library started on
 * the null platform fails init and leaves nothing behind. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "instance.h"
#include "platform/platform.h"

static void gpu(void **state)
{
  (void)state;
  const struct ho_gpu_ops *g = &ho_gpu_null_ops;
  int i = 7, native = 0;
  char buf[32];
  enum ho_mem_kind kind;
  uintptr_t base;
  size_t size;
  void *p = NULL;
  struct ho_gpu_event *ev = NULL;
  uint64_t off;
  assert_string_equal(g->name, "null");
  assert_int_equal(g->device_count(&i, &native), hipObjNotSupported);
  assert_int_equal(g->current_device(&i, &native), hipObjNotSupported);
  assert_int_equal(g->pci_bus_id(0, buf, sizeof buf, &native),
                   hipObjNotSupported);
  assert_int_equal(g->classify(buf, &kind, &i, &native), hipObjNotSupported);
  assert_int_equal(g->alloc_range(buf, &base, &size, &native),
                   hipObjNotSupported);
  assert_int_equal(g->host_alloc(4096, &p, &native), hipObjNotSupported);
  assert_null(p);
  g->host_free(NULL);
  assert_int_equal(g->copy_async(buf, buf, 1, &ev, &native),
                   hipObjNotSupported);
  assert_null(ev);
  assert_int_equal(g->event_query(NULL, &native), hipObjNotSupported);
  g->event_destroy(NULL);
  assert_int_equal(g->export_dmabuf(buf, 1, &i, &off, &native),
                   hipObjNotSupported);
  assert_int_equal(g->flush_rdma_writes(&native), hipObjNotSupported);
  assert_int_equal(i, 7); /* no output written */
}

static void verbs(void **state)
{
  (void)state;
  const struct ho_verbs_ops *v = &ho_verbs_null_ops;
  int n = 5;
  assert_string_equal(v->name, "null");
  errno = 0;
  assert_null(v->get_device_list(&n));
  assert_int_equal(errno, EOPNOTSUPP);
  assert_int_equal(n, 0);
  v->free_device_list(NULL);
  assert_null(v->get_device_name(NULL));
  assert_null(v->open_device(NULL));
  assert_int_equal(v->close_device(NULL), EOPNOTSUPP);
  assert_int_equal(v->query_device(NULL, NULL), EOPNOTSUPP);
  assert_int_equal(v->query_port(NULL, 1, NULL), EOPNOTSUPP);
  errno = 0;
  assert_int_equal(v->query_gid(NULL, 1, 0, NULL), -1);
  assert_int_equal(errno, EOPNOTSUPP);
  assert_null(v->alloc_pd(NULL));
  assert_int_equal(v->dealloc_pd(NULL), EOPNOTSUPP);
  assert_null(v->reg_mr(NULL, NULL, 0, 0));
  errno = 0;
  assert_null(v->reg_dmabuf_mr(NULL, 0, 0, 0, -1, 0));
  assert_int_equal(errno, EOPNOTSUPP);
  assert_int_equal(v->dereg_mr(NULL), EOPNOTSUPP);
  assert_null(v->create_cq(NULL, 1, NULL, NULL, 0));
  assert_int_equal(v->destroy_cq(NULL), EOPNOTSUPP);
  assert_null(v->create_qp(NULL, NULL));
  assert_int_equal(v->modify_qp(NULL, NULL, 0), EOPNOTSUPP);
  assert_int_equal(v->query_qp(NULL, NULL, 0, NULL), EOPNOTSUPP);
  assert_int_equal(v->destroy_qp(NULL), EOPNOTSUPP);
  struct ibv_send_wr swr, *sbad = NULL;
  struct ibv_recv_wr rwr, *rbad = NULL;
  assert_int_equal(v->post_send(NULL, &swr, &sbad), EOPNOTSUPP);
  assert_ptr_equal(sbad, &swr);
  assert_int_equal(v->post_recv(NULL, &rwr, &rbad), EOPNOTSUPP);
  assert_ptr_equal(rbad, &rwr);
  assert_true(v->poll_cq(NULL, 1, NULL) < 0);
  errno = 0;
  assert_null(v->create_comp_channel(NULL));
  assert_int_equal(errno, EOPNOTSUPP);
  assert_int_equal(v->destroy_comp_channel(NULL), EOPNOTSUPP);
  assert_int_equal(v->req_notify_cq(NULL, 0), EOPNOTSUPP);
  errno = 0;
  assert_int_equal(v->get_cq_event(NULL, NULL, NULL), -1);
  assert_int_equal(errno, EOPNOTSUPP);
  v->ack_cq_events(NULL, 1);
}

static void topology(void **state)
{
  (void)state;
  const struct ho_topology t = {.ops = &ho_topology_null_ops};
  struct ho_nic_info nics[2];
  size_t n = 9;
  assert_int_equal(t.ops->list_nics(&t, nics, 2, &n), hipObjNotSupported);
  assert_int_equal(n, 9);
  assert_int_equal(t.ops->gid_type(&t, "x", 1, 0), HO_GID_UNKNOWN);
}

/* Init on nothing but null tables: a clean failure, and no instance. */
static void init_fails_cleanly(void **state)
{
  (void)state;
  const struct ho_topology topo = {.ops = &ho_topology_null_ops};
  const struct ho_platform plat = {&ho_verbs_null_ops, &ho_gpu_null_ops,
                                   &topo};
  struct ho_options opts;
  ho_options_defaults(&opts);
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = -1;
  cfg.nicHint = "nic0";
  int native = 0;
  hipObjOpError_t e = ho_init_with(&plat, &opts, &cfg, &native);
  assert_int_not_equal(e, hipObjSuccess);
  assert_int_equal(ho_shutdown(), hipObjNotInitialized);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gpu),
      cmocka_unit_test(verbs),
      cmocka_unit_test(topology),
      cmocka_unit_test(init_fails_cleanly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
