/* SPDX-License-Identifier: MIT */
/* hipObjGetInfo(): the version without an instance; the GPU, NIC, port, GID
 * and the reason for the NIC after init on the fake world; the size rule
 * (older and newer callers); the transfer counters, which must match what
 * moved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakes/fake_gpu.h"
#include "fakes/fake_sysfs.h"
#include "fakes/sim_peer.h"
#include "fakes/world.h"
#include "hipobj.h"
#include "instance.h"

#define OBJ_SIZE (256u << 10)

static hipObjOpError_t info_of(hipObjInfo_t *info)
{
  memset(info, 0x5a, sizeof *info); /* what is not written shows */
  info->size = sizeof *info;
  return hipObjGetInfo(info).opError;
}

static void before_init_only_the_version(void **state)
{
  (void)state;
  hipObjInfo_t info;
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_int_equal(info.size, sizeof info);
  assert_int_equal(info.initialized, 0);
  assert_int_equal(info.versionMajor, HIPOBJ_VERSION_MAJOR);
  assert_int_equal(info.versionMinor, HIPOBJ_VERSION_MINOR);
  assert_int_equal(info.versionPatch, HIPOBJ_VERSION_PATCH);
  assert_int_equal(info.gpuDevice, -1);
  assert_int_equal(info.gidIndex, -1);
  assert_int_equal(info.nicChoice, hipObjNicChoiceNone);
  assert_string_equal(info.nicName, "");
  assert_int_equal(info.transfers, 0);
  assert_int_equal(info.regModes, 0);
}

static void size_rule(void **state)
{
  (void)state;
  assert_int_equal(hipObjGetInfo(NULL).opError, hipObjInvalidValue);
  hipObjInfo_t info;
  memset(&info, 0, sizeof info);
  info.size = 8;
  assert_int_equal(hipObjGetInfo(&info).opError, hipObjInvalidValue);
  info.size = 487;
  assert_int_equal(hipObjGetInfo(&info).opError, hipObjInvalidValue);
  /* A caller built against a newer header, with a field this library
   * does not know: the library writes its own size and says so. */
  struct {
    hipObjInfo_t known;
    uint64_t later;
  } newer;
  memset(&newer, 0x5a, sizeof newer);
  newer.known.size = sizeof newer;
  assert_int_equal(hipObjGetInfo(&newer.known).opError, hipObjSuccess);
  assert_int_equal(newer.known.size, sizeof(hipObjInfo_t));
  assert_true(newer.later == 0x5a5a5a5a5a5a5a5aull);
  assert_int_equal(newer.known.versionMajor, HIPOBJ_VERSION_MAJOR);
}

struct fixture {
  struct world w;
  struct sim_peer peer;
  uint8_t *buf;
};

static int setup(void **state)
{
  struct fixture *f = calloc(1, sizeof *f);
  fake_gpu_reset();
  fake_gpu_set_device_count(1);
  fake_gpu_set_bus_id(0, "0000:c1:00.0");
  if (!f || world_create(&f->w, &fake_gpu_ops) != 0)
    return -1;
  f->w.opts.max_transfers = 3;
  if (world_init(&f->w, NULL) != hipObjSuccess)
    return -1;
  if (sim_peer_create(&f->peer, &f->w.plat, NULL, OBJ_SIZE) != 0)
    return -1;
  for (size_t i = 0; i < OBJ_SIZE; i++)
    f->peer.object[i] = (uint8_t)(i * 7 + 3);
  f->buf = aligned_alloc(4096, OBJ_SIZE);
  if (!f->buf || hipObjBufRegisterHost(f->buf, OBJ_SIZE).opError != hipObjSuccess)
    return -1;
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  struct fixture *f = *state;
  hipObjBufDeregister(f->buf);
  hipObjShutdown();
  sim_peer_destroy(&f->peer);
  world_destroy(&f->w);
  free(f->buf);
  free(f);
  return 0;
}

static void what_init_chose(void **state)
{
  (void)state;
  hipObjInfo_t info;
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_int_equal(info.initialized, 1);
  assert_int_equal(info.gpuRuntime, hipObjGpuRuntimeOther); /* the fake */
  assert_int_equal(info.gpuDevice, 0);
  assert_string_equal(info.gpuBusId, "0000:c1:00.0");
  /* The GPU sits at c1: the server NIC of the world is the closest. */
  assert_string_equal(info.nicName, WORLD_SERVER_NIC);
  assert_string_equal(info.nicBusId, WORLD_SERVER_BUS);
  assert_int_equal(info.nicChoice, hipObjNicChoiceClosestToGpu);
  assert_int_equal(info.maxTransfers, 3);
  assert_true(info.regModes & HIPOBJ_REG_HOST);
  assert_true(info.regModes & HIPOBJ_REG_PLAIN);
  assert_true(info.regModes & HIPOBJ_REG_STAGED);
  /* Port and GID: the device's own, as the token carries them. */
  struct ho_instance *inst = ho_instance_get();
  assert_int_equal(info.port, inst->dev->port);
  assert_int_equal(info.gidIndex, inst->dev->gid_index);
  assert_memory_equal(info.gid, inst->dev->gid.raw, 16);
  assert_int_equal(info.gidType, (int)inst->config.gid_type);
  ho_instance_put(inst);
  assert_true(info.port >= 1);
  assert_true(info.gidType != hipObjGidUnknown);
  /* The GPU's place in the PCI tree is not known: one rail, that NIC. */
  assert_int_equal(info.railCount, 1);
  assert_int_equal(info.railsInUse, 1);
  assert_int_equal(info.railNear, 0);
  assert_int_equal(info.railPathClass, hipObjPathUnknown);
  assert_string_equal(info.rails[0].name, WORLD_SERVER_NIC);
  assert_string_equal(info.rails[0].busId, WORLD_SERVER_BUS);
  assert_int_equal(info.rails[0].why, hipObjRailClosestBusId);
  assert_int_equal(info.rails[0].numaNode, 0);
}

struct warned {
  int count;
  char last[512];
};

static void on_warning(void *ctx, hipObjLogLevel_t level, const char *message)
{
  struct warned *w = ctx;
  if (level != hipObjLogWarning)
    return;
  w->count++;
  snprintf(w->last, sizeof w->last, "%s", message);
}

/* With the GPU in the tree, both NICs are through its root complex at
 * links of unknown (equal) speed: two rails, by bus id; the first is the
 * NIC init opens. HIPOBJ_MAX_RAILS 1 keeps one. */
static void rails_from_the_tree(void **state)
{
  struct fixture *f = *state;
  hipObjInfo_t info;
  assert_int_equal(hipObjBufDeregister(f->buf).opError, hipObjSuccess);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  fake_gpu_set_bus_id(0, "0000:c5:00.0");
  assert_int_equal(ho_fake_sysfs_add_pci(&f->w.fs,
                                         "pci0000:00/0000:00:03.0/0000:c5:00.0",
                                         0x10de, 0x030200, 0),
                   0);
  assert_int_equal(world_init_gpu(&f->w, NULL, 0), hipObjSuccess);
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_int_equal(info.railCount, 2);
  assert_int_equal(info.railsInUse, 2);
  for (int i = 0; i < 2; i++)
    assert_int_equal(info.railStats[i].state, hipObjRailUp);
  assert_int_equal(info.railStats[2].state, hipObjRailNotOpen);
  assert_int_equal(info.railNear, 2);
  assert_int_equal(info.railGpus, 1);
  assert_int_equal(info.railGpuIndex, 0);
  assert_int_equal(info.railPathClass, hipObjPathRootPort);
  assert_string_equal(info.rails[0].name, WORLD_CLIENT_NIC);
  assert_string_equal(info.rails[1].name, WORLD_SERVER_NIC);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(info.rails[i].why, hipObjRailNearGpu);
    assert_int_equal(info.rails[i].pathClass, hipObjPathRootPort);
    assert_int_equal(info.rails[i].rateMbps, 0);
  }
  assert_string_equal(info.rails[2].name, ""); /* filled with zeros */
  assert_string_equal(info.nicName, WORLD_CLIENT_NIC);
  assert_int_equal(info.nicChoice, hipObjNicChoiceClosestToGpu);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);

  f->w.opts.max_rails = 1;
  assert_int_equal(world_init_gpu(&f->w, NULL, 0), hipObjSuccess);
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_int_equal(info.railCount, 1);
  assert_int_equal(info.railNear, 2);
  assert_string_equal(info.rails[0].name, WORLD_CLIENT_NIC);
  assert_string_equal(info.rails[1].name, "");
  f->w.opts.max_rails = 0;
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);

  /* A GPU on the other socket: its rails cross there, and init says so
   * once. */
  struct warned w = {0, ""};
  fake_gpu_set_bus_id(0, "0000:85:00.0");
  assert_int_equal(ho_fake_sysfs_add_pci(&f->w.fs,
                                         "pci0000:80/0000:80:01.0/0000:85:00.0",
                                         0x10de, 0x030200, 1),
                   0);
  assert_int_equal(hipObjSetLogCallback(on_warning, &w).opError,
                   hipObjSuccess);
  assert_int_equal(world_init_gpu(&f->w, NULL, 0), hipObjSuccess);
  assert_int_equal(hipObjSetLogCallback(NULL, NULL).opError, hipObjSuccess);
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_int_equal(info.railPathClass, hipObjPathOther);
  assert_int_equal(info.rails[0].pathClass, hipObjPathOther);
  assert_int_equal(w.count, 1);
  assert_non_null(strstr(w.last, "GPU 0000:85:00.0 has no NIC on its NUMA "
                                  "node"));
  assert_int_equal(hipObjBufRegisterHost(f->buf, OBJ_SIZE).opError,
                   hipObjSuccess);
}

static hipObjOpError_t xfer(struct fixture *f, int op, size_t n,
                            enum sim_mode mode)
{
  struct sim_request r;
  sim_request_init(&r, &f->peer, op, 0, n);
  r.mode = mode;
  return op == HIPOBJ_RDMA_OP_GET
             ? hipObjGet(NULL, f->buf, n, 0, &sim_ops, &r).opError
             : hipObjPut(NULL, f->buf, n, 0, &sim_ops, &r).opError;
}

static void counters_match_what_moved(void **state)
{
  struct fixture *f = *state;
  hipObjInfo_t info;
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_GET, 4096, SIM_NORMAL), hipObjSuccess);
  assert_memory_equal(f->buf, f->peer.object, 4096);
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_GET, 100, SIM_NORMAL), hipObjSuccess);
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_PUT, 65536, SIM_NORMAL), hipObjSuccess);
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_GET, 4096, SIM_DECLINE), hipObjS3Error);
  assert_int_equal(xfer(f, HIPOBJ_RDMA_OP_PUT, OBJ_SIZE + 1, SIM_NORMAL),
                   hipObjInvalidValue);
  /* A transfer the application drives counts when it completes. */
  char *token = NULL;
  assert_int_equal(hipObjGetRdmaToken(f->buf, 8192, HIPOBJ_RDMA_OP_GET, &token).opError,
                   hipObjSuccess);
  struct sim_request r;
  sim_request_init(&r, &f->peer, HIPOBJ_RDMA_OP_GET, 0, 8192);
  assert_int_equal(sim_ops.sendRequest(&r, token, HO_TOKEN_HEX), 0);
  assert_int_equal(hipObjCompleteRdmaTransfer(token, r.reply, strlen(r.reply)).opError,
                   hipObjSuccess);
  assert_int_equal(hipObjPutRdmaToken(token).opError, hipObjSuccess);

  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_int_equal(info.transfers, 6);
  assert_int_equal(info.transfersSucceeded, 4);
  assert_int_equal(info.bytesGet, 4096 + 100 + 8192);
  assert_int_equal(info.bytesPut, 65536);
  assert_int_equal(info.failures[hipObjS3Error], 1);
  assert_int_equal(info.failures[hipObjInvalidValue], 1);
  uint64_t sum = 0;
  for (int i = 0; i < HIPOBJ_INFO_MAX_ERRORS; i++)
    sum += info.failures[i];
  assert_int_equal(info.transfers, info.transfersSucceeded + sum);

  /* A shutdown discards the counters with the instance. */
  assert_int_equal(hipObjBufDeregister(f->buf).opError, hipObjSuccess);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_int_equal(info.initialized, 0);
  assert_int_equal(info.transfers, 0);
  assert_int_equal(world_init(&f->w, NULL), hipObjSuccess);
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_int_equal(info.transfers, 0);
  assert_int_equal(hipObjBufRegisterHost(f->buf, OBJ_SIZE).opError, hipObjSuccess);
}

/* The reasons for a NIC, and HIPOBJ_INIT_FIRST_ACTIVE_NIC. */
static void why_this_nic(void **state)
{
  struct fixture *f = *state;
  hipObjInfo_t info;
  hipObjConfig_t cfg = {0};
  int native = 0;
  assert_int_equal(hipObjBufDeregister(f->buf).opError, hipObjSuccess);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  fake_gpu_set_device_count(0); /* no GPU from here on */

  cfg.gpuDevice = -1;
  assert_int_equal(ho_init_with(&f->w.plat, &f->w.opts, &cfg, &native),
                   hipObjNicNotFound);
  cfg.flags = HIPOBJ_INIT_FIRST_ACTIVE_NIC;
  assert_int_equal(ho_init_with(&f->w.plat, &f->w.opts, &cfg, &native),
                   hipObjSuccess);
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_string_equal(info.nicName, WORLD_CLIENT_NIC); /* first by name */
  assert_int_equal(info.nicChoice, hipObjNicChoiceFirstActive);
  assert_int_equal(info.gpuDevice, -1);
  assert_int_equal(info.regModes, HIPOBJ_REG_HOST);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);

  /* With an inactive first NIC, the next active one. */
  assert_int_equal(ho_fake_sysfs_set_port_state(&f->w.fs, WORLD_CLIENT_NIC, 1,
                                                "1: DOWN"), 0);
  assert_int_equal(ho_init_with(&f->w.plat, &f->w.opts, &cfg, &native),
                   hipObjSuccess);
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_string_equal(info.nicName, WORLD_SERVER_NIC);
  assert_int_equal(info.nicChoice, hipObjNicChoiceFirstActive);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  assert_int_equal(ho_fake_sysfs_set_port_state(&f->w.fs, WORLD_CLIENT_NIC, 1,
                                                "4: ACTIVE"), 0);

  /* A hint wins over the flag. */
  cfg.nicHint = WORLD_SERVER_NIC;
  assert_int_equal(ho_init_with(&f->w.plat, &f->w.opts, &cfg, &native),
                   hipObjSuccess);
  assert_int_equal(info_of(&info), hipObjSuccess);
  assert_string_equal(info.nicName, WORLD_SERVER_NIC);
  assert_int_equal(info.nicChoice, hipObjNicChoiceHint);
  assert_string_equal(info.nicBusId, WORLD_SERVER_BUS);
  assert_int_equal(info.nicNumaNode, 0); /* as the world's sysfs says */

  /* hipObjInit() accepts the flag and no other. */
  hipObjConfig_t bad = {0};
  bad.gpuDevice = -1;
  bad.flags = 0x2;
  assert_int_equal(hipObjInit(&bad).opError, hipObjInvalidValue);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(before_init_only_the_version),
      cmocka_unit_test(size_rule),
      cmocka_unit_test_setup_teardown(what_init_chose, setup, teardown),
      cmocka_unit_test_setup_teardown(counters_match_what_moved, setup, teardown),
      cmocka_unit_test_setup_teardown(rails_from_the_tree, setup, teardown),
      cmocka_unit_test_setup_teardown(why_this_nic, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
