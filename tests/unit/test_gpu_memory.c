/* SPDX-License-Identifier: MIT */
/* Device memory on the fake GPU runtime: GPU-direct registration (dma-buf,
 * then plain), the staging fallback, staging copies with a deadline, the
 * abandoned-copies list, and GPU/NIC selection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakes/fake_gpu.h"
#include "fakes/fake_verbs.h"
#include "fakes/sim_peer.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "instance.h"

#define DEV_SIZE (1u << 20)

struct fixture {
  struct world w;
  struct sim_peer peer;
  uint8_t *dev;
};

static int setup_with(void **state, void (*tweak)(struct world *))
{
  struct fixture *f = calloc(1, sizeof *f);
  fake_gpu_reset();
  fake_gpu_set_device_count(1);
  fake_gpu_set_bus_id(0, "0000:41:00.0");
  if (!f || world_create(&f->w, &fake_gpu_ops) != 0)
    return -1;
  f->w.opts.stage_timeout_ms = 100;
  if (tweak)
    tweak(&f->w);
  if (world_init(&f->w, NULL) != hipObjSuccess)
    return -1;
  if (sim_peer_create(&f->peer, &f->w.plat, NULL, DEV_SIZE) != 0)
    return -1;
  for (size_t i = 0; i < DEV_SIZE; i++)
    f->peer.object[i] = (uint8_t)(i * 13 + 1);
  f->dev = fake_gpu_malloc(DEV_SIZE);
  memset(f->dev, 0xee, DEV_SIZE);
  *state = f;
  return 0;
}

static int setup(void **state) { return setup_with(state, NULL); }

static int teardown(void **state)
{
  struct fixture *f = *state;
  hipObjShutdown();
  sim_peer_destroy(&f->peer);
  world_destroy(&f->w);
  fake_gpu_free(f->dev);
  free(f);
  return 0;
}

static struct ho_buf *entry(void *p)
{
  struct ho_instance *inst = ho_instance_get();
  struct ho_buf *b = ho_buffers_find(inst->buffers, p);
  ho_instance_put(inst);
  return b;
}

static hipObjOpError_t xfer(struct fixture *f, int op, size_t n, off_t off)
{
  struct sim_request r;
  sim_request_init(&r, &f->peer, op, (uint64_t)off, n);
  return op == HIPOBJ_RDMA_OP_GET
             ? hipObjGet(NULL, f->dev, n, off, &sim_ops, &r).opError
             : hipObjPut(NULL, f->dev, n, off, &sim_ops, &r).opError;
}

static void nic_closest_to_gpu(void **state)
{
  struct fixture *f = *state;
  struct ho_instance *inst = ho_instance_get();
  assert_string_equal(inst->config.nic, WORLD_CLIENT_NIC);
  assert_int_equal(inst->config.gpu, 0);
  assert_string_equal(inst->config.gpu_bus_id, "0000:41:00.0");
  ho_instance_put(inst);
  hipObjShutdown();
  fake_gpu_set_device_count(2);
  fake_gpu_set_bus_id(1, "0000:c2:00.0");
  assert_int_equal(world_init_gpu(&f->w, NULL, 1), hipObjSuccess);
  inst = ho_instance_get();
  assert_string_equal(inst->config.nic, WORLD_SERVER_NIC);
  ho_instance_put(inst);
  hipObjShutdown();
  assert_int_equal(world_init_gpu(&f->w, NULL, 2), hipObjInvalidValue);
  fake_gpu_set_current_device(1);
  assert_int_equal(world_init_gpu(&f->w, NULL, -1), hipObjSuccess);
}

static void dmabuf_direct_get_flushes(void **state)
{
  struct fixture *f = *state;
  fake_fabric_set_dmabuf(true);
  fake_gpu_set_dmabuf_supported(true);
  assert_int_equal(hipObjBufRegister(f->dev, DEV_SIZE).opError, hipObjSuccess);
  struct ho_buf *b = entry(f->dev);
  assert_int_equal(b->kind, HO_BUF_DIRECT);
  assert_true(b->dmabuf);
  assert_true(b->token_addr == (uintptr_t)f->dev);
  ho_buf_put(b);
  struct fake_gpu_counters c;
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_GET, 4096, 512), hipObjSuccess);
  assert_memory_equal(f->dev + 512, f->peer.object + 512, 4096);
  fake_gpu_get_counters(&c);
  assert_int_equal(c.flushes, 1);
  assert_int_equal(c.copies, 0); /* GPU-direct: no staging copy */
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_PUT, 4096, 0), hipObjSuccess);
  fake_gpu_get_counters(&c);
  assert_int_equal(c.flushes, 1); /* only after a GET */
  assert_int_equal(hipObjBufDeregister(f->dev).opError, hipObjSuccess);
}

static void plain_mr_when_dmabuf_unsupported(void **state)
{
  struct fixture *f = *state;
  /* rxe answers EOPNOTSUPP: a plain registration is tried next. */
  fake_gpu_set_dmabuf_supported(true);
  assert_int_equal(hipObjBufRegister(f->dev, DEV_SIZE).opError, hipObjSuccess);
  struct ho_buf *b = entry(f->dev);
  assert_int_equal(b->kind, HO_BUF_DIRECT);
  assert_false(b->dmabuf);
  ho_buf_put(b);
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.dmabuf_exports, 1);
}

static void staged_when_nothing_else_works(void **state)
{
  struct fixture *f = *state;
  fake_verb_fail("reg_mr", 0, 1, EFAULT); /* the NIC cannot reach the GPU */
  assert_int_equal(hipObjBufRegister(f->dev, DEV_SIZE).opError, hipObjSuccess);
  struct ho_buf *b = entry(f->dev);
  assert_int_equal(b->kind, HO_BUF_STAGED);
  assert_true(b->token_addr == (uintptr_t)b->staging);
  ho_buf_put(b);
  /* GET: the server writes the staging buffer, the library copies it to
   * the device. */
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_GET, 70000, 1000), hipObjSuccess);
  assert_memory_equal(f->dev + 1000, f->peer.object + 1000, 70000);
  /* PUT: the library copies device to staging before the server reads. */
  memset(f->dev, 0x5c, 4096);
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_PUT, 4096, 0), hipObjSuccess);
  assert_int_equal(f->peer.object[0], 0x5c);
  assert_int_equal(f->peer.object[4095], 0x5c);
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.copies, 2);
  assert_int_equal(c.copy_bytes, 74096);
  assert_int_equal(c.flushes, 0); /* staged buffers need no flush */
  assert_int_equal(hipObjBufDeregister(f->dev).opError, hipObjSuccess);
  fake_gpu_get_counters(&c);
  assert_int_equal(c.host_frees, 1);
}

static void require_direct(struct world *w) { w->opts.require_gpu_direct = true; }
static void no_dmabuf(struct world *w) { w->opts.dmabuf = false; }

static void require_gpu_direct_refuses_staging(void **state)
{
  struct fixture *f = *state;
  fake_verb_fail("reg_mr", 0, 1, EFAULT);
  assert_int_equal(hipObjBufRegister(f->dev, DEV_SIZE).opError, hipObjDmabufNotSupported);
  assert_int_equal(hipObjBufDeregister(f->dev).opError, hipObjBufNotRegistered);
}

static void dmabuf_switched_off(void **state)
{
  struct fixture *f = *state;
  fake_fabric_set_dmabuf(true);
  fake_gpu_set_dmabuf_supported(true);
  assert_int_equal(hipObjBufRegister(f->dev, DEV_SIZE).opError, hipObjSuccess);
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.dmabuf_exports, 0);
}

static void device_memory_rules(void **state)
{
  struct fixture *f = *state;
  /* The range must lie within one allocation. */
  assert_int_equal(hipObjBufRegister(f->dev, DEV_SIZE + 1).opError, hipObjInvalidValue);
  assert_int_equal(hipObjBufRegister(f->dev + 16, DEV_SIZE - 16).opError, hipObjSuccess);
  void *managed = fake_gpu_malloc_managed(4096);
  assert_int_equal(hipObjBufRegister(managed, 4096).opError, hipObjNotSupported);
  assert_int_equal(hipObjBufRegisterHost(f->dev, 4096).opError, hipObjInvalidValue);
  fake_gpu_free(managed);
  /* Failures of the runtime come back with its native code. */
  fake_gpu_fail(FAKE_GPU_EXPORT_DMABUF, 0, 1, hipObjInternalError, 77);
  fake_verb_fail("reg_mr", 0, 1, EFAULT);
  fake_gpu_fail(FAKE_GPU_HOST_ALLOC, 0, 1, hipObjInternalError, 2);
  hipObjError_t e = hipObjBufRegister(f->dev, 4096);
  assert_int_equal(e.opError, hipObjInternalError);
  assert_int_equal(e.hipError, 2);
}

static void stalled_copy_is_abandoned_then_released(void **state)
{
  struct fixture *f = *state;
  fake_verb_fail("reg_mr", 0, 1, EFAULT);
  assert_int_equal(hipObjBufRegister(f->dev, DEV_SIZE).opError, hipObjSuccess);
  fake_gpu_stall_copies(true);
  memset(f->dev, 0x77, 4096);
  /* The copy misses its deadline (100 ms): abandoned, reported. */
  assert_int_equal(hipObjBufSync(f->dev, 4096, 0, HIPOBJ_SYNC_TO_HOST).opError,
                   hipObjRdmaError);
  struct ho_instance *inst = ho_instance_get();
  assert_int_equal(ho_abandoned_count(inst->abandoned), 1);
  ho_instance_put(inst);
  /* While it may still run, the buffer is busy for everything. */
  assert_int_equal(hipObjBufSync(f->dev, 16, 0, HIPOBJ_SYNC_TO_DEVICE).opError, hipObjBusy);
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_GET, 4096, 0), hipObjBusy);
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_PUT, 4096, 0), hipObjBusy);
  char *tok = NULL;
  assert_int_equal(hipObjGetRdmaToken(f->dev, 64, HIPOBJ_RDMA_OP_GET, &tok).opError,
                   hipObjBusy);
  assert_int_equal(hipObjBufDeregister(f->dev).opError, hipObjBusy);
  /* The GPU finally gets to it: the late copy lands in the staging buffer,
   * and the next call releases the copy. */
  fake_gpu_stall_copies(false);
  assert_int_equal(fake_gpu_release_stalled(), 1);
  struct ho_buf *b = entry(f->dev);
  assert_int_equal(((uint8_t *)b->staging)[0], 0x77);
  ho_buf_put(b);
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_GET, 4096, 0), hipObjSuccess);
  inst = ho_instance_get();
  assert_int_equal(ho_abandoned_count(inst->abandoned), 0);
  ho_instance_put(inst);
  assert_int_equal(hipObjBufDeregister(f->dev).opError, hipObjSuccess);
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.events_live, 0);
}

static void shutdown_leaks_a_running_copy(void **state)
{
  struct fixture *f = *state;
  fake_verb_fail("reg_mr", 0, 1, EFAULT);
  assert_int_equal(hipObjBufRegister(f->dev, DEV_SIZE).opError, hipObjSuccess);
  fake_gpu_stall_copies(true);
  assert_int_equal(hipObjBufSync(f->dev, 4096, 0, HIPOBJ_SYNC_TO_HOST).opError,
                   hipObjRdmaError);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  struct fake_gpu_counters c;
  fake_gpu_get_counters(&c);
  assert_int_equal(c.events_live, 1);  /* leaked on purpose ... */
  assert_int_equal(c.host_frees, 0);   /* ... with its staging buffer */
  /* The copy completing later writes memory that still exists. */
  assert_int_equal(fake_gpu_release_stalled(), 1);
}

static void copy_failures(void **state)
{
  struct fixture *f = *state;
  fake_verb_fail("reg_mr", 0, 1, EFAULT);
  assert_int_equal(hipObjBufRegister(f->dev, DEV_SIZE).opError, hipObjSuccess);
  fake_gpu_fail(FAKE_GPU_COPY_ASYNC, 0, 1, hipObjInternalError, 700);
  hipObjError_t e = hipObjBufSync(f->dev, 64, 0, HIPOBJ_SYNC_TO_HOST);
  assert_int_equal(e.opError, hipObjInternalError);
  assert_int_equal(e.hipError, 700);
  fake_gpu_fail(FAKE_GPU_EVENT_QUERY, 0, 1, hipObjInternalError, 701);
  e = hipObjBufSync(f->dev, 64, 0, HIPOBJ_SYNC_TO_DEVICE);
  assert_int_equal(e.opError, hipObjInternalError);
  assert_int_equal(e.hipError, 701);
  assert_int_equal(hipObjBufSync(f->dev, 64, 0, HIPOBJ_SYNC_TO_DEVICE).opError,
                   hipObjSuccess);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
static int setup_require(void **s) { return setup_with(s, require_direct); }
static int setup_nodmabuf(void **s) { return setup_with(s, no_dmabuf); }

int main(void)
{
  const struct CMUnitTest tests[] = {
      T(nic_closest_to_gpu),
      T(dmabuf_direct_get_flushes),
      T(plain_mr_when_dmabuf_unsupported),
      T(staged_when_nothing_else_works),
      cmocka_unit_test_setup_teardown(require_gpu_direct_refuses_staging,
                                      setup_require, teardown),
      cmocka_unit_test_setup_teardown(dmabuf_switched_off, setup_nodmabuf, teardown),
      T(device_memory_rules),
      T(stalled_copy_is_abandoned_then_released),
      T(shutdown_leaks_a_running_copy),
      T(copy_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
