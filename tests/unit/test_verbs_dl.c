/* SPDX-License-Identifier: MIT */
/* The verbs seam against the real libibverbs.so.1 of this machine: loaded
 * on first use only, every entry resolved to the library's own default
 * symbol, the inline hot-path entries dispatched through the context's ops.
 * Without libibverbs.so.1 the test is skipped (77), with the reason. */
#define _GNU_SOURCE /* dladdr */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/verbs.h"

#define SONAME "libibverbs.so.1"

static bool loaded_before_first_use;
static const struct ho_verbs_ops *ops;
static void *lib; /* our own reference, for dlsym comparisons */

/* ---- loading ------------------------------------------------------------- */

static void test_not_loaded_before_first_use(void **state)
{
  (void)state;
  assert_false(loaded_before_first_use);
}

static void test_loaded_by_soname(void **state)
{
  (void)state;
  assert_non_null(ops);
  assert_non_null(lib);
  assert_string_equal(ops->name, "libibverbs");
}

static void test_same_table_every_call(void **state)
{
  (void)state;
  assert_ptr_equal(ho_verbs_system(), ops);
  assert_ptr_equal(ho_verbs_system(), ops);
}

static void *call_system(void *arg)
{
  (void)arg;
  return (void *)ho_verbs_system();
}

static void test_same_table_from_threads(void **state)
{
  (void)state;
  pthread_t th[8];
  for (int i = 0; i < 8; i++)
    assert_int_equal(pthread_create(&th[i], NULL, call_system, NULL), 0);
  for (int i = 0; i < 8; i++) {
    void *r = NULL;
    assert_int_equal(pthread_join(th[i], &r), 0);
    assert_ptr_equal(r, ops);
  }
}

/* ---- the table ------------------------------------------------------------ */

/* Each forwarded entry is the library's default version of its symbol. */
#define SAME_AS_SYMBOL(field)                                                  \
  do {                                                                         \
    void *want = dlsym(lib, "ibv_" #field);                                    \
    assert_non_null(want);                                                     \
    void *got;                                                                 \
    memcpy(&got, &ops->field, sizeof got);                                     \
    if (got != want)                                                           \
      fail_msg("ibv_" #field ": %p, dlsym gives %p", got, want);               \
  } while (0)

static void test_required_entries_resolve(void **state)
{
  (void)state;
  SAME_AS_SYMBOL(get_device_list);
  SAME_AS_SYMBOL(free_device_list);
  SAME_AS_SYMBOL(get_device_name);
  SAME_AS_SYMBOL(open_device);
  SAME_AS_SYMBOL(close_device);
  SAME_AS_SYMBOL(query_device);
  SAME_AS_SYMBOL(query_gid);
  SAME_AS_SYMBOL(alloc_pd);
  SAME_AS_SYMBOL(dealloc_pd);
  SAME_AS_SYMBOL(reg_mr);
  SAME_AS_SYMBOL(dereg_mr);
  SAME_AS_SYMBOL(create_cq);
  SAME_AS_SYMBOL(destroy_cq);
  SAME_AS_SYMBOL(create_qp);
  SAME_AS_SYMBOL(modify_qp);
  SAME_AS_SYMBOL(query_qp);
  SAME_AS_SYMBOL(destroy_qp);
  SAME_AS_SYMBOL(create_comp_channel);
  SAME_AS_SYMBOL(destroy_comp_channel);
  SAME_AS_SYMBOL(get_cq_event);
  SAME_AS_SYMBOL(ack_cq_events);
  /* Exported, though wrapped (the header's query_port logic). */
  assert_non_null(dlsym(lib, "ibv_query_port"));
}

static void test_optional_dmabuf(void **state)
{
  (void)state;
  if (dlsym(lib, "ibv_reg_dmabuf_mr")) {
    SAME_AS_SYMBOL(reg_dmabuf_mr);
  } else {
    assert_null(ops->reg_dmabuf_mr);
    printf("# this libibverbs has no ibv_reg_dmabuf_mr\n");
  }
}

static void test_table_complete(void **state)
{
  (void)state;
  const void *entries[] = {
      (const void *)ops->get_device_list, (const void *)ops->free_device_list,
      (const void *)ops->get_device_name, (const void *)ops->open_device,
      (const void *)ops->close_device,    (const void *)ops->query_device,
      (const void *)ops->query_port,      (const void *)ops->query_gid,
      (const void *)ops->alloc_pd,        (const void *)ops->dealloc_pd,
      (const void *)ops->reg_mr,          (const void *)ops->dereg_mr,
      (const void *)ops->create_cq,       (const void *)ops->destroy_cq,
      (const void *)ops->create_qp,       (const void *)ops->modify_qp,
      (const void *)ops->query_qp,        (const void *)ops->destroy_qp,
      (const void *)ops->post_send,       (const void *)ops->post_recv,
      (const void *)ops->poll_cq,         (const void *)ops->req_notify_cq,
      (const void *)ops->create_comp_channel,
      (const void *)ops->destroy_comp_channel,
      (const void *)ops->get_cq_event,    (const void *)ops->ack_cq_events,
  };
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if (!entries[i])
      fail_msg("entry %zu is NULL", i);
}

/* The inline functions are not exported: the table must not depend on
 * them being found. */
static void test_inline_functions_not_exported(void **state)
{
  (void)state;
  if (dlsym(lib, "ibv_post_send") || dlsym(lib, "ibv_poll_cq"))
    printf("# note: this libibverbs exports an inline function\n");
  assert_non_null(ops->post_send);
  assert_non_null(ops->post_recv);
  assert_non_null(ops->poll_cq);
}

/* The device list works, whether or not this host has RDMA devices. */
static void test_device_list(void **state)
{
  (void)state;
  int num = -1;
  struct ibv_device **list = ops->get_device_list(&num);
  if (!list) {
    printf("# ibv_get_device_list: no list here\n");
    return;
  }
  assert_true(num >= 0);
  for (int i = 0; i < num; i++) {
    const char *name = ops->get_device_name(list[i]);
    assert_non_null(name);
    printf("# RDMA device %s\n", name);
  }
  assert_null(list[num]);
  ops->free_device_list(list);
}

/* ---- dispatch through the context's ops ----------------------------------- */

static struct {
  void *obj;
  void *arg;
  int n;
  size_t len;
} seen;

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
                          struct ibv_send_wr **bad)
{
  seen.obj = qp;
  seen.arg = wr;
  (void)bad;
  return 11;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                          struct ibv_recv_wr **bad)
{
  seen.obj = qp;
  seen.arg = wr;
  (void)bad;
  return 12;
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
  seen.obj = cq;
  seen.arg = wc;
  seen.n = n;
  return 3;
}

static int fake_query_port(struct ibv_context *ctx, uint8_t port,
                           struct ibv_port_attr *attr, size_t len)
{
  seen.obj = ctx;
  seen.arg = attr;
  seen.n = port;
  seen.len = len;
  attr->active_mtu = IBV_MTU_1024;
  return 0;
}

static void test_hot_path_uses_context_ops(void **state)
{
  (void)state;
  struct ibv_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.ops.post_send = fake_post_send;
  ctx.ops.post_recv = fake_post_recv;
  ctx.ops.poll_cq = fake_poll_cq;
  struct ibv_qp qp = {.context = &ctx};
  struct ibv_cq cq = {.context = &ctx};
  struct ibv_send_wr swr;
  struct ibv_recv_wr rwr;
  struct ibv_send_wr *sbad = NULL;
  struct ibv_recv_wr *rbad = NULL;
  struct ibv_wc wc[4];

  assert_int_equal(ops->post_send(&qp, &swr, &sbad), 11);
  assert_ptr_equal(seen.obj, &qp);
  assert_ptr_equal(seen.arg, &swr);
  assert_int_equal(ops->post_recv(&qp, &rwr, &rbad), 12);
  assert_ptr_equal(seen.arg, &rwr);
  assert_int_equal(ops->poll_cq(&cq, 4, wc), 3);
  assert_ptr_equal(seen.obj, &cq);
  assert_ptr_equal(seen.arg, wc);
  assert_int_equal(seen.n, 4);
}

/* An extended context: the provider's query_port gets the full struct. */
static void test_query_port_extended(void **state)
{
  (void)state;
  struct verbs_context *v = calloc(1, sizeof *v);
  assert_non_null(v);
  v->sz = sizeof *v;
  v->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
  v->query_port = fake_query_port;
  struct ibv_port_attr attr;
  memset(&attr, 0xff, sizeof attr);
  assert_int_equal(ops->query_port(&v->context, 2, &attr), 0);
  assert_ptr_equal(seen.obj, &v->context);
  assert_ptr_equal(seen.arg, &attr);
  assert_int_equal(seen.n, 2);
  assert_int_equal(seen.len, sizeof(struct ibv_port_attr));
  assert_int_equal(attr.active_mtu, IBV_MTU_1024);
  free(v);
}

/* ---- a libibverbs.so.1 without the symbols --------------------------------- */

#define CHILD_ENV "HO_TEST_VERBS_STUB_CHILD"

/* In the child: the stub is found first, so the table must be NULL. */
static int stub_child(void)
{
  return ho_verbs_system() == NULL ? 0 : 1;
}

/* Copies the file at src to dst. */
static void copy_file(const char *src, const char *dst)
{
  FILE *in = fopen(src, "rb");
  FILE *out = fopen(dst, "wb");
  assert_non_null(in);
  assert_non_null(out);
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0)
    assert_int_equal(fwrite(buf, 1, n, out), n);
  fclose(in);
  assert_int_equal(fclose(out), 0);
}

/* Runs this program again with dir first on the library path and returns
 * its exit status; its stderr goes to err_path. */
static int run_child(const char *dir, const char *err_path)
{
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    FILE *err = freopen(err_path, "w", stderr);
    if (!err || setenv("LD_LIBRARY_PATH", dir, 1) || setenv(CHILD_ENV, "1", 1))
      _exit(99);
    execl("/proc/self/exe", "test_verbs_dl", (char *)NULL);
    _exit(98);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* A shared library that is not libibverbs, installed under its soname:
 * one warning line naming the first missing symbol, and no table. */
static void test_missing_symbol_is_loud(void **state)
{
  (void)state;
  Dl_info info;
  assert_true(dladdr((void *)_cmocka_run_group_tests, &info) != 0);
  assert_non_null(info.dli_fname);
  char dir[] = "/tmp/hipobj-verbs-stub-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char lib_path[sizeof dir + 32];
  char err_path[sizeof dir + 32];
  snprintf(lib_path, sizeof lib_path, "%s/libibverbs.so.1", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr", dir);
  copy_file(info.dli_fname, lib_path);

  int rc = run_child(dir, err_path);
  char text[4096] = "";
  FILE *err = fopen(err_path, "r");
  assert_non_null(err);
  size_t n = fread(text, 1, sizeof text - 1, err);
  text[n] = '\0';
  fclose(err);
  unlink(lib_path);
  unlink(err_path);
  rmdir(dir);

  assert_int_equal(rc, 0);
  size_t lines = 0;
  for (size_t i = 0; i < n; i++)
    lines += text[i] == '\n';
  if (lines != 1 || !strstr(text, "ibv_get_device_list"))
    fail_msg("expected one warning naming ibv_get_device_list, got: %s", text);
}

int main(void)
{
  if (getenv(CHILD_ENV))
    return stub_child();

  loaded_before_first_use =
      dlopen(SONAME, RTLD_NOW | RTLD_NOLOAD) != NULL;
  ops = ho_verbs_system();
  if (!ops) {
    void *h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *why = dlerror();
      printf("SKIP: %s is not installed here (%s)\n", SONAME,
             why ? why : "dlopen failed");
      return 77;
    }
    fprintf(stderr, "%s loads, but ho_verbs_system() returned NULL\n",
            SONAME);
    return 1;
  }
  lib = dlopen(SONAME, RTLD_NOW | RTLD_NOLOAD);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_not_loaded_before_first_use),
      cmocka_unit_test(test_loaded_by_soname),
      cmocka_unit_test(test_same_table_every_call),
      cmocka_unit_test(test_same_table_from_threads),
      cmocka_unit_test(test_required_entries_resolve),
      cmocka_unit_test(test_optional_dmabuf),
      cmocka_unit_test(test_table_complete),
      cmocka_unit_test(test_inline_functions_not_exported),
      cmocka_unit_test(test_device_list),
      cmocka_unit_test(test_hot_path_uses_context_ops),
      cmocka_unit_test(test_query_port_extended),
      cmocka_unit_test(test_missing_symbol_is_loud),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
