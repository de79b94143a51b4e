/* SPDX-License-Identifier: MIT */
/* The GPU seam's host-only runtime, its bus-id helper, and the fake GPU that
 * the other unit tests drive the library with. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fakes/fake_gpu.h"
#include "platform/gpu.h"

/* ---- none ----------------------------------------------------------------- */

static void none_reports_no_device(void **state)
{
  const struct ho_gpu_ops *g = &ho_gpu_none_ops;
  int count = -1, dev = 7, native = 0;
  char bus[32] = "untouched";
  assert_string_equal(g->name, "none");
  assert_int_equal(g->device_count(&count, &native), hipObjSuccess);
  assert_int_equal(count, 0);
  assert_int_equal(g->current_device(&dev, NULL), hipObjNotSupported);
  assert_int_equal(dev, 7);
  assert_int_equal(g->pci_bus_id(0, bus, sizeof bus, NULL), hipObjNotSupported);
  assert_string_equal(bus, "untouched");
  assert_int_equal(native, 0);
}

static void none_classifies_everything_as_host(void **state)
{
  const struct ho_gpu_ops *g = &ho_gpu_none_ops;
  int on_stack = 0;
  void *heap = malloc(64);
  const void *ptrs[] = {&on_stack, heap, NULL, (void *)(uintptr_t)0x1000};
  for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) {
    enum ho_mem_kind kind = HO_MEM_DEVICE;
    int dev = 5;
    assert_int_equal(g->classify(ptrs[i], &kind, &dev, NULL), hipObjSuccess);
    assert_int_equal(kind, HO_MEM_HOST);
    assert_int_equal(dev, -1);
  }
  uintptr_t base = 1;
  size_t size = 2;
  assert_int_equal(g->alloc_range(heap, &base, &size, NULL), hipObjNotSupported);
  assert_int_equal(base, 1);
  assert_int_equal(size, 2);
  free(heap);
}

static void none_host_alloc_is_page_aligned(void **state)
{
  const struct ho_gpu_ops *g = &ho_gpu_none_ops;
  long page = sysconf(_SC_PAGESIZE);
  void *p = NULL;
  assert_int_equal(g->host_alloc(3 * 4096 + 1, &p, NULL), hipObjSuccess);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % (uintptr_t)page, 0);
  memset(p, 0xa5, 3 * 4096 + 1);
  g->host_free(p);
  g->host_free(NULL);
  p = (void *)&page;
  assert_int_equal(g->host_alloc(0, &p, NULL), hipObjInvalidValue);
  assert_ptr_equal(p, &page);
}

static void none_copy_is_done_when_it_returns(void **state)
{
  const struct ho_gpu_ops *g = &ho_gpu_none_ops;
  char src[100], dst[100];
  struct ho_gpu_event *ev = NULL;
  for (int i = 0; i < 100; i++)
    src[i] = (char)i, dst[i] = 0;
  assert_int_equal(g->copy_async(dst, src, sizeof src, &ev, NULL), hipObjSuccess);
  assert_non_null(ev);
  assert_memory_equal(dst, src, sizeof src);
  assert_int_equal(g->event_query(ev, NULL), hipObjSuccess);
  assert_int_equal(g->event_query(ev, NULL), hipObjSuccess);
  g->event_destroy(ev);
  g->event_destroy(NULL);
  ev = NULL;
  assert_int_equal(g->copy_async(dst, src, 0, &ev, NULL), hipObjSuccess);
  assert_int_equal(g->event_query(ev, NULL), hipObjSuccess);
  g->event_destroy(ev);
}

static void none_has_no_gpu_direct(void **state)
{
  const struct ho_gpu_ops *g = &ho_gpu_none_ops;
  char buf[64] = {0};
  int fd = -2;
  uint64_t off = 9;
  assert_int_equal(g->export_dmabuf(buf, sizeof buf, &fd, &off, NULL),
                   hipObjNotSupported);
  assert_int_equal(fd, -2);
  assert_int_equal(off, 9);
  assert_int_equal(g->flush_rdma_writes(NULL), hipObjNotSupported);
}

/* ---- bus ids --------------------------------------------------------------- */

static void bus_ids_are_normalised(void **state)
{
  static const struct {
    const char *raw, *want;
  } ok[] = {
      {"0000:c1:00.0", "0000:c1:00.0"},     {"0000:C1:00.0", "0000:c1:00.0"},
      {"00000000:C1:00.0", "0000:c1:00.0"}, {"c1:00.0", "0000:c1:00.0"},
      {"1:2:3.4", "0001:02:03.4"},          {"0001:81:1f.7", "0001:81:1f.7"},
      {"10000:e3:00.1", "10000:e3:00.1"},
  };
  static const char *const bad[] = {
      "",          "c1",           "c1:00",        "0000:c1:00",
      "0000:c1:00.0\n", "0000:c1:00.8", "0000:c1:20.0", "0000:c1:00.00",
      "0000:c1f:00.0", "0000:c1:000.0", "000000000:c1:00.0", "x000:c1:00.0",
      "0000:c1:00.0 ", ":c1:00.0",   "0000::00.0",   "0000:c1:.0",
  };
  char buf[32];
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    assert_int_equal(ho_gpu_format_bus_id(ok[i].raw, buf, sizeof buf),
                     hipObjSuccess);
    assert_string_equal(buf, ok[i].want);
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    strcpy(buf, "same");
    if (ho_gpu_format_bus_id(bad[i], buf, sizeof buf) != hipObjInvalidValue)
      fail_msg("accepted \"%s\" as \"%s\"", bad[i], buf);
  }
  assert_int_equal(ho_gpu_format_bus_id("0000:c1:00.0", buf, 12),
                   hipObjInvalidValue);
  assert_int_equal(ho_gpu_format_bus_id("0000:c1:00.0", buf, 13), hipObjSuccess);
  assert_int_equal(ho_gpu_format_bus_id(NULL, buf, 13), hipObjInvalidValue);
}

/* ---- the fake ------------------------------------------------------------- */

static int fake_setup(void **state)
{
  fake_gpu_reset();
  return 0;
}

static int fake_teardown(void **state)
{
  fake_gpu_reset();
  assert_int_equal(fake_gpu_live_allocations(), 0);
  return 0;
}

static void fake_devices(void **state)
{
  const struct ho_gpu_ops *g = &fake_gpu_ops;
  int n = 0, dev = -1;
  char bus[32];
  assert_int_equal(g->device_count(&n, NULL), hipObjSuccess);
  assert_int_equal(n, 1);
  assert_int_equal(g->current_device(&dev, NULL), hipObjSuccess);
  assert_int_equal(dev, 0);
  assert_int_equal(g->pci_bus_id(0, bus, sizeof bus, NULL), hipObjSuccess);
  assert_string_equal(bus, "0000:c1:00.0");
  assert_int_equal(g->pci_bus_id(1, bus, sizeof bus, NULL), hipObjInvalidValue);

  fake_gpu_set_device_count(3);
  fake_gpu_set_current_device(2);
  fake_gpu_set_bus_id(2, "0000:41:00.0");
  assert_int_equal(g->device_count(&n, NULL), hipObjSuccess);
  assert_int_equal(n, 3);
  assert_int_equal(g->current_device(&dev, NULL), hipObjSuccess);
  assert_int_equal(dev, 2);
  assert_int_equal(g->pci_bus_id(2, bus, sizeof bus, NULL), hipObjSuccess);
  assert_string_equal(bus, "0000:41:00.0");
  assert_int_equal(g->pci_bus_id(2, bus, 12, NULL), hipObjInvalidValue);

  fake_gpu_set_device_count(0);
  assert_int_equal(g->current_device(&dev, NULL), hipObjNotSupported);
}

static void expect_kind(const void *p, enum ho_mem_kind want_kind, int want_dev)
{
  enum ho_mem_kind kind = HO_MEM_HOST;
  int dev = -7;
  assert_int_equal(fake_gpu_ops.classify(p, &kind, &dev, NULL), hipObjSuccess);
  assert_int_equal(kind, want_kind);
  assert_int_equal(dev, want_dev);
}

static void fake_memory_kinds_and_ranges(void **state)
{
  const struct ho_gpu_ops *g = &fake_gpu_ops;
  fake_gpu_set_device_count(2);
  char *d0 = fake_gpu_malloc(10000);
  char *d1 = fake_gpu_malloc_on(1, 4096);
  char *m = fake_gpu_malloc_managed(4096);
  void *pinned = NULL;
  char pageable[16];
  assert_int_equal(g->host_alloc(8192, &pinned, NULL), hipObjSuccess);
  assert_int_equal(fake_gpu_live_allocations(), 4);

  expect_kind(d0, HO_MEM_DEVICE, 0);
  expect_kind(d0 + 9999, HO_MEM_DEVICE, 0);
  expect_kind(d1 + 17, HO_MEM_DEVICE, 1);
  expect_kind(m, HO_MEM_MANAGED, 0);
  expect_kind(pinned, HO_MEM_HOST_PINNED, 0);
  expect_kind(pageable, HO_MEM_HOST, -1);
  assert_int_equal(d0[5000], 0); /* zero-filled, and the test can read it */

  uintptr_t base = 0;
  size_t size = 0;
  int native = 0;
  assert_int_equal(g->alloc_range(d0 + 1234, &base, &size, NULL), hipObjSuccess);
  assert_int_equal(base, (uintptr_t)d0);
  assert_int_equal(size, 10000);
  assert_int_equal(g->alloc_range(pageable, &base, &size, &native),
                   hipObjInvalidValue);
  assert_int_equal(native, 1);
  assert_int_equal(base, (uintptr_t)d0);

  fake_gpu_free(d0);
  expect_kind(d0 + 1, HO_MEM_HOST, -1);
  g->host_free(pinned);
  fake_gpu_free(d1);
  fake_gpu_free(m);
  fake_gpu_free(NULL);
  assert_int_equal(fake_gpu_live_allocations(), 0);

  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.host_allocs, 1);
  assert_int_equal(c.host_frees, 1);
}

static void fake_immediate_copies(void **state)
{
  const struct ho_gpu_ops *g = &fake_gpu_ops;
  char *dev = fake_gpu_malloc(4096);
  char host[4096];
  struct ho_gpu_event *ev = NULL;
  memset(host, 'h', sizeof host);
  assert_int_equal(g->copy_async(dev, host, 1000, &ev, NULL), hipObjSuccess);
  assert_int_equal(dev[999], 'h');
  assert_int_equal(dev[1000], 0);
  assert_int_equal(g->event_query(ev, NULL), hipObjSuccess);
  g->event_destroy(ev);

  fake_gpu_set_copy_polls(2);
  assert_int_equal(g->copy_async(host, dev, 10, &ev, NULL), hipObjSuccess);
  assert_int_equal(g->event_query(ev, NULL), hipObjBusy);
  assert_int_equal(g->event_query(ev, NULL), hipObjBusy);
  assert_int_equal(g->event_query(ev, NULL), hipObjSuccess);
  g->event_destroy(ev);

  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.copies, 2);
  assert_int_equal(c.copy_bytes, 1010);
  assert_int_equal(c.events_live, 0);
  assert_int_equal(c.calls[FAKE_GPU_EVENT_QUERY], 4);
}

static void fake_stalled_copy_writes_late(void **state)
{
  const struct ho_gpu_ops *g = &fake_gpu_ops;
  char *dev = fake_gpu_malloc(64);
  char host[64];
  struct ho_gpu_event *ev = NULL;
  memset(host, 'a', sizeof host);
  fake_gpu_stall_copies(true);
  assert_int_equal(g->copy_async(dev, host, sizeof host, &ev, NULL),
                   hipObjSuccess);
  assert_int_equal(fake_gpu_stalled_copies(), 1);
  for (int i = 0; i < 5; i++)
    assert_int_equal(g->event_query(ev, NULL), hipObjBusy);
  assert_int_equal(dev[0], 0); /* nothing moved yet */
  memset(host, 'b', sizeof host); /* what the copy reads is what is there late */
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.copies, 0);

  assert_int_equal(fake_gpu_release_stalled(), 1);
  assert_int_equal(fake_gpu_stalled_copies(), 0);
  assert_int_equal(g->event_query(ev, NULL), hipObjSuccess);
  assert_int_equal(dev[0], 'b');
  assert_int_equal(dev[63], 'b');
  g->event_destroy(ev);
  fake_gpu_get_counters(&c);
  assert_int_equal(c.copies, 1);
  assert_int_equal(c.copy_bytes, 64);
  assert_int_equal(fake_gpu_release_stalled(), 0);
}

static void fake_destroying_the_event_does_not_cancel_the_copy(void **state)
{
  const struct ho_gpu_ops *g = &fake_gpu_ops;
  char *dev = fake_gpu_malloc(16);
  char host[16];
  struct ho_gpu_event *e1 = NULL, *e2 = NULL;
  memset(host, 'x', sizeof host);
  fake_gpu_stall_copies(true);
  assert_int_equal(g->copy_async(dev, host, 8, &e1, NULL), hipObjSuccess);
  assert_int_equal(g->copy_async(dev + 8, host, 8, &e2, NULL), hipObjSuccess);
  g->event_destroy(e1); /* abandoned, as a timed-out staging copy is */
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.events_live, 1);
  fake_gpu_stall_copies(false); /* later copies run at once; these still wait */
  assert_int_equal(g->event_query(e2, NULL), hipObjBusy);
  assert_int_equal(fake_gpu_release_stalled(), 2);
  assert_memory_equal(dev, "xxxxxxxxxxxxxxxx", 16);
  assert_int_equal(g->event_query(e2, NULL), hipObjSuccess);
  g->event_destroy(e2);
}

static void fake_reset_drops_stalled_copies(void **state)
{
  const struct ho_gpu_ops *g = &fake_gpu_ops;
  char *dev = fake_gpu_malloc(16);
  char host[16] = "0123456789abcde";
  struct ho_gpu_event *ev = NULL;
  fake_gpu_stall_copies(true);
  assert_int_equal(g->copy_async(dev, host, 16, &ev, NULL), hipObjSuccess);
  fake_gpu_reset(); /* frees dev; the copy is dropped, never performed */
  assert_int_equal(fake_gpu_live_allocations(), 0);
  assert_int_equal(fake_gpu_stalled_copies(), 0);
  assert_int_equal(g->event_query(ev, NULL), hipObjSuccess);
  g->event_destroy(ev);
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.copies, 0);
  assert_int_equal(c.events_live, 0);
}

struct poller {
  struct ho_gpu_event *ev;
  int busy_answers; /* atomic: the test waits for the first */
};

static void *poll_until_done(void *arg)
{
  struct poller *p = arg;
  hipObjOpError_t e;
  while ((e = fake_gpu_ops.event_query(p->ev, NULL)) == hipObjBusy) {
    __atomic_add_fetch(&p->busy_answers, 1, __ATOMIC_SEQ_CST);
    usleep(100);
  }
  return e == hipObjSuccess ? p : NULL;
}

static void fake_release_from_another_thread(void **state)
{
  char *dev = fake_gpu_malloc(32);
  char host[32];
  struct poller p = {NULL, 0};
  pthread_t t;
  void *ret = NULL;
  memset(host, 'q', sizeof host);
  fake_gpu_stall_copies(true);
  assert_int_equal(fake_gpu_ops.copy_async(host, dev, 32, &p.ev, NULL),
                   hipObjSuccess);
  assert_int_equal(pthread_create(&t, NULL, poll_until_done, &p), 0);
  while (__atomic_load_n(&p.busy_answers, __ATOMIC_SEQ_CST) == 0)
    usleep(100);
  assert_int_equal(host[0], 'q');
  assert_int_equal(fake_gpu_release_stalled(), 1);
  assert_int_equal(pthread_join(t, &ret), 0);
  assert_ptr_equal(ret, &p);
  assert_true(p.busy_answers > 0);
  assert_int_equal(host[31], 0);
  fake_gpu_ops.event_destroy(p.ev);
}

static void fake_injected_failures(void **state)
{
  const struct ho_gpu_ops *g = &fake_gpu_ops;
  void *p = NULL;
  int native = 0;
  fake_gpu_fail(FAKE_GPU_HOST_ALLOC, 1, 2, hipObjInternalError, 2);
  assert_int_equal(g->host_alloc(64, &p, &native), hipObjSuccess);
  g->host_free(p);
  p = NULL;
  assert_int_equal(g->host_alloc(64, &p, &native), hipObjInternalError);
  assert_int_equal(native, 2);
  assert_null(p);
  assert_int_equal(g->host_alloc(64, &p, NULL), hipObjInternalError);
  assert_int_equal(g->host_alloc(64, &p, NULL), hipObjSuccess);
  g->host_free(p);

  char *dev = fake_gpu_malloc(64);
  char host[64] = {0};
  struct ho_gpu_event *ev = NULL;
  fake_gpu_fail(FAKE_GPU_COPY_ASYNC, 0, 1, hipObjInternalError, 700);
  assert_int_equal(g->copy_async(host, dev, 64, &ev, &native),
                   hipObjInternalError);
  assert_int_equal(native, 700);
  assert_null(ev);
  fake_gpu_fail(FAKE_GPU_EVENT_QUERY, 1, 1, hipObjInternalError, 719);
  fake_gpu_set_copy_polls(1);
  assert_int_equal(g->copy_async(host, dev, 64, &ev, NULL), hipObjSuccess);
  assert_int_equal(g->event_query(ev, NULL), hipObjBusy);
  assert_int_equal(g->event_query(ev, &native), hipObjInternalError);
  assert_int_equal(native, 719);
  g->event_destroy(ev);

  int count = 0;
  fake_gpu_fail(FAKE_GPU_DEVICE_COUNT, 0, 1, hipObjNotSupported, 100);
  assert_int_equal(g->device_count(&count, &native), hipObjNotSupported);
  assert_int_equal(native, 100);
  assert_int_equal(g->device_count(&count, NULL), hipObjSuccess);
  fake_gpu_fail(FAKE_GPU_FLUSH_RDMA_WRITES, 0, 1, hipObjInternalError, 999);
  assert_int_equal(g->flush_rdma_writes(NULL), hipObjInternalError);
  assert_int_equal(g->flush_rdma_writes(NULL), hipObjSuccess);

  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.calls[FAKE_GPU_HOST_ALLOC], 4);
  assert_int_equal(c.host_allocs, 2);
  assert_int_equal(c.flushes, 1);
  assert_int_equal(c.copies, 1);
}

static void fake_dmabuf_export(void **state)
{
  const struct ho_gpu_ops *g = &fake_gpu_ops;
  char *dev = fake_gpu_malloc(3 * 4096);
  char host[64];
  int fd = -1, native = 0;
  uint64_t off = 0;
  assert_int_equal(g->export_dmabuf(dev + 4096 + 8, 100, &fd, &off, NULL),
                   hipObjSuccess);
  assert_true(fd >= 0);
  assert_true(fcntl(fd, F_GETFD) >= 0); /* a real descriptor, the caller's */
  assert_int_equal(off, 4096 + 8);
  close(fd);
  fd = -1;
  assert_int_equal(g->export_dmabuf(dev + 4096, 2 * 4096 + 1, &fd, &off, &native),
                   hipObjInvalidValue); /* runs past the allocation */
  assert_int_equal(g->export_dmabuf(host, sizeof host, &fd, &off, &native),
                   hipObjInvalidValue);
  assert_int_equal(native, 1);
  fake_gpu_set_dmabuf_supported(false);
  assert_int_equal(g->export_dmabuf(dev, 64, &fd, &off, &native),
                   hipObjNotSupported);
  assert_int_equal(native, 801);
  assert_int_equal(fd, -1);
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.dmabuf_exports, 1);
  assert_int_equal(c.calls[FAKE_GPU_EXPORT_DMABUF], 4);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(none_reports_no_device),
      cmocka_unit_test(none_classifies_everything_as_host),
      cmocka_unit_test(none_host_alloc_is_page_aligned),
      cmocka_unit_test(none_copy_is_done_when_it_returns),
      cmocka_unit_test(none_has_no_gpu_direct),
      cmocka_unit_test(bus_ids_are_normalised),
      cmocka_unit_test_setup_teardown(fake_devices, fake_setup, fake_teardown),
      cmocka_unit_test_setup_teardown(fake_memory_kinds_and_ranges, fake_setup,
                                      fake_teardown),
      cmocka_unit_test_setup_teardown(fake_immediate_copies, fake_setup,
                                      fake_teardown),
      cmocka_unit_test_setup_teardown(fake_stalled_copy_writes_late, fake_setup,
                                      fake_teardown),
      cmocka_unit_test_setup_teardown(
          fake_destroying_the_event_does_not_cancel_the_copy, fake_setup,
          fake_teardown),
      cmocka_unit_test_setup_teardown(fake_reset_drops_stalled_copies,
                                      fake_setup, fake_teardown),
      cmocka_unit_test_setup_teardown(fake_release_from_another_thread,
                                      fake_setup, fake_teardown),
      cmocka_unit_test_setup_teardown(fake_injected_failures, fake_setup,
                                      fake_teardown),
      cmocka_unit_test_setup_teardown(fake_dmabuf_export, fake_setup,
                                      fake_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
