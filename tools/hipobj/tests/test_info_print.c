/* SPDX-License-Identifier: MIT */
/* What `hipobj info` prints of the library's choice is what
 * hipObjGetInfo() returns: the command's printer (info_print.c) run on the
 * query of a fake world (a GPU at c1:00.0, two NICs), compared line by line
 * with the query's fields, formatted here independently (the GID by
 * inet_ntop). Then without a GPU, where the library takes the first active
 * NIC. */
#include <arpa/inet.h>
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
#include "fakes/world.h"
#include "hipobj.h"
#include "info_print.h"
#include "instance.h"

static char printed[4096];

static void query_and_print(hipObjInfo_t *info)
{
  memset(info, 0, sizeof *info);
  info->size = sizeof *info;
  assert_int_equal(hipObjGetInfo(info).opError, hipObjSuccess);
  assert_int_equal(info->initialized, 1);
  FILE *f = fmemopen(printed, sizeof printed, "w");
  assert_non_null(f);
  tool_info_print(f, info);
  fclose(f);
}

static void expect_line(const char *fmt, ...)
{
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (!strstr(printed, line))
    fail_msg("printed:\n%s\nlacks the line \"%s\"", printed, line);
}

static void printed_choice_is_the_query(void **state)
{
  (void)state;
  struct world w;
  hipObjInfo_t info;
  char gid[INET6_ADDRSTRLEN];
  fake_gpu_reset();
  fake_gpu_set_device_count(1);
  fake_gpu_set_bus_id(0, "0000:c1:00.0");
  assert_int_equal(world_create(&w, &fake_gpu_ops), 0);
  assert_int_equal(world_init(&w, NULL), hipObjSuccess);
  query_and_print(&info);

  assert_string_equal(info.nicName, WORLD_SERVER_NIC); /* closest to c1 */
  assert_int_equal(info.nicChoice, hipObjNicChoiceClosestToGpu);
  expect_line("  GPU: %d (other), PCI %s\n", info.gpuDevice, info.gpuBusId);
  expect_line("  NIC: %s, PCI %s, NUMA %d\n", info.nicName, info.nicBusId,
              info.nicNumaNode);
  expect_line("  why: the active NIC closest to the GPU by PCI bus id\n");
  expect_line("  rails: 1; carrying transfers: 1\n");
  expect_line("    %s: PCI %s, NUMA 0, place unknown, rate unknown: closest "
              "by bus id (PCI tree unknown)\n",
              info.nicName, info.nicBusId);
  assert_non_null(inet_ntop(AF_INET6, info.gid, gid, sizeof gid));
  assert_non_null(strstr(gid, "::ffff:")); /* the world's GID is IPv4-mapped */
  expect_line("  port %u, GID %d %s (RoCE v2)\n", info.port, info.gidIndex,
              gid);
  expect_line("device memory: dma-buf, plain, staged, tried in this order\n");
  expect_line("  connections: %u\n", info.maxTransfers);
  assert_int_equal(info.tokenScope, hipObjTokenScopeWindow);
  expect_line("  tokens: a memory window per transfer (its range and "
              "direction only)\n");
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);

  /* No GPU, no hint: the library's first active NIC, and the reason. */
  fake_gpu_set_device_count(0);
  hipObjConfig_t cfg = {0};
  cfg.gpuDevice = -1;
  cfg.flags = HIPOBJ_INIT_FIRST_ACTIVE_NIC;
  int native = 0;
  assert_int_equal(ho_init_with(&w.plat, &w.opts, &cfg, &native),
                   hipObjSuccess);
  query_and_print(&info);
  assert_string_equal(info.nicName, WORLD_CLIENT_NIC);
  expect_line("  GPU: none (runtime other): host memory only\n");
  expect_line("  NIC: %s, PCI %s, NUMA %d\n", WORLD_CLIENT_NIC,
              WORLD_CLIENT_BUS, info.nicNumaNode);
  expect_line("  why: the first active RDMA device: no hint, and none closer "
              "to a GPU");
  expect_line("device memory: no GPU\n");
  expect_line("    %s: PCI %s, NUMA 0, place unknown, rate unknown: the "
              "first active device\n", WORLD_CLIENT_NIC, WORLD_CLIENT_BUS);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);

  /* Every CPU on node 0, where both NICs are: two NUMA-local rails. */
  assert_int_equal(ho_fake_sysfs_set_node_cpus(&w.fs, 0, "0-1000000"), 0);
  assert_int_equal(ho_init_with(&w.plat, &w.opts, &cfg, &native),
                   hipObjSuccess);
  query_and_print(&info);
  expect_line("  rails: 2 of 2 NICs on this CPU's NUMA node; carrying "
              "transfers: 2\n");
  expect_line("    %s: PCI %s, NUMA 0, same NUMA node, rate unknown: on this "
              "CPU's NUMA node\n      up\n", WORLD_SERVER_NIC,
              WORLD_SERVER_BUS);
  expect_line("  connections: %u per rail\n", info.maxTransfers);
  assert_int_equal(hipObjShutdown().opError, hipObjSuccess);
  world_destroy(&w);
}

static void gid_text(void **state)
{
  (void)state;
  char out[64];
  const uint8_t v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};
  const uint8_t ll[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                          0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55};
  tool_gid_text(v4, out, sizeof out);
  assert_string_equal(out, "::ffff:10.1.2.3");
  tool_gid_text(ll, out, sizeof out);
  assert_string_equal(out, "fe80:0000:0000:0000:0211:22ff:fe33:4455");
  tool_gid_text(ll, out, 8);
  assert_string_equal(out, "fe80:00");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(printed_choice_is_the_query),
      cmocka_unit_test(gid_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
