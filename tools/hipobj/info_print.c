/* SPDX-License-Identifier: MIT */
#include "info_print.h"

#include <stddef.h>
#include <string.h>

void tool_gid_text(const uint8_t raw[16], char *out, size_t cap)
{
  static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (memcmp(raw, v4, sizeof v4) == 0) {
    snprintf(out, cap, "::ffff:%u.%u.%u.%u", raw[12], raw[13], raw[14],
             raw[15]);
    return;
  }
  size_t o = 0;
  for (int i = 0; i < 16 && o < cap; i += 2) {
    int n = snprintf(out + o, cap - o, "%s%02x%02x", i ? ":" : "", raw[i],
                     raw[i + 1]);
    if (n < 0)
      break;
    o += (size_t)n;
  }
}

/* Whether the library that filled the struct wrote the rails. */
static int has_rails(const hipObjInfo_t *i)
{
  return i->size >= offsetof(hipObjInfo_t, rails) + sizeof i->rails;
}

static int has_rail_stats(const hipObjInfo_t *i)
{
  return i->size >= offsetof(hipObjInfo_t, railStats) + sizeof i->railStats;
}

static const char *rail_state(uint32_t s)
{
  switch (s) {
  case hipObjRailUp:
    return "up";
  case hipObjRailDown:
    return "marked down (probed after HIPOBJ_FAILBACK_MS)";
  default:
    return "not open (its NIC did not open: left out)";
  }
}

const char *tool_nic_reason(const hipObjInfo_t *info)
{
  switch (info->nicChoice) {
  case hipObjNicChoiceClosestToGpu:
    if (has_rails(info) && info->railNear > 0)
      return "the first rail of the GPU's near set (see rails)";
    return "the active NIC closest to the GPU by PCI bus id";
  case hipObjNicChoiceHint:
    return "the first name of the NIC hint (no GPU bus id to compare)";
  case hipObjNicChoiceFirstActive:
    return "the first active RDMA device: no hint, and none closer to a GPU "
           "(choose with --nic)";
  default:
    return "unknown";
  }
}

static const char *runtime_name(int32_t rt)
{
  switch (rt) {
  case hipObjGpuRuntimeNone:
    return "none";
  case hipObjGpuRuntimeHip:
    return "HIP";
  case hipObjGpuRuntimeCuda:
    return "CUDA";
  default:
    return "other";
  }
}

static const char *gid_type_name(int32_t t)
{
  switch (t) {
  case hipObjGidIb:
    return "IB";
  case hipObjGidRoceV1:
    return "RoCE v1";
  case hipObjGidRoceV2:
    return "RoCE v2";
  default:
    return "type unknown";
  }
}

static void print_reg_modes(FILE *out, uint32_t m)
{
  fprintf(out, "  registration: host memory %s; device memory:",
          m & HIPOBJ_REG_HOST ? "plain" : "no");
  if (!(m & (HIPOBJ_REG_DMABUF | HIPOBJ_REG_PLAIN | HIPOBJ_REG_STAGED)))
    fprintf(out, " no GPU");
  if (m & HIPOBJ_REG_DMABUF)
    fprintf(out, " dma-buf,");
  if (m & HIPOBJ_REG_PLAIN)
    fprintf(out, " plain,");
  if (m & HIPOBJ_REG_STAGED)
    fprintf(out, " staged,");
  fprintf(out, "%s\n", m & (HIPOBJ_REG_DMABUF | HIPOBJ_REG_PLAIN |
                            HIPOBJ_REG_STAGED) ? " tried in this order" : "");
}

const char *tool_path_class_name(int32_t c)
{
  switch (c) {
  case hipObjPathSameSwitch:
    return "same PCIe switch";
  case hipObjPathSwitches:
    return "through PCIe switches";
  case hipObjPathRootPort:
    return "through the root complex";
  case hipObjPathNumaNode:
    return "same NUMA node";
  case hipObjPathOther:
    return "another NUMA node";
  default:
    return "place unknown";
  }
}

static const char *rail_why(int32_t w)
{
  switch (w) {
  case hipObjRailNearGpu:
    return "near the GPU";
  case hipObjRailNumaLocal:
    return "on this CPU's NUMA node";
  case hipObjRailHint:
    return "named by the hint";
  case hipObjRailClosestBusId:
    return "closest by bus id (PCI tree unknown)";
  case hipObjRailFirstActive:
    return "the first active device";
  default:
    return "unknown";
  }
}

static void print_rails(FILE *out, const hipObjInfo_t *i)
{
  if (!has_rails(i) || i->railCount == 0)
    return;
  fprintf(out, "  rails: %u", (unsigned)i->railCount);
  if (i->railNear > 0 && i->gpuDevice >= 0)
    fprintf(out, " of the GPU's %u nearest NICs (%s), shared by %u GPU%s, "
                 "this one's index %u",
            (unsigned)i->railNear, tool_path_class_name(i->railPathClass),
            (unsigned)i->railGpus, i->railGpus == 1 ? "" : "s",
            (unsigned)i->railGpuIndex);
  else if (i->railNear > 0)
    fprintf(out, " of %u NICs on this CPU's NUMA node",
            (unsigned)i->railNear);
  fprintf(out, "; carrying transfers: %u\n", (unsigned)i->railsInUse);
  for (uint32_t r = 0; r < i->railCount && r < HIPOBJ_INFO_MAX_RAILS; r++) {
    const hipObjRailInfo_t *x = &i->rails[r];
    char rate[32];
    if (x->rateMbps)
      snprintf(rate, sizeof rate, "%u Gb/s", (unsigned)(x->rateMbps / 1000));
    else
      snprintf(rate, sizeof rate, "rate unknown");
    fprintf(out, "    %s: PCI %s, NUMA %d, %s, %s: %s\n", x->name,
            x->busId[0] ? x->busId : "- (virtual)", (int)x->numaNode,
            tool_path_class_name(x->pathClass), rate, rail_why(x->why));
    if (has_rail_stats(i))
      fprintf(out, "      %s\n", rail_state(i->railStats[r].state));
  }
}

void tool_info_print(FILE *out, const hipObjInfo_t *i)
{
  char gid[64];
  if (i->gpuDevice >= 0)
    fprintf(out, "  GPU: %d (%s), PCI %s\n", i->gpuDevice,
            runtime_name(i->gpuRuntime), i->gpuBusId[0] ? i->gpuBusId : "?");
  else
    fprintf(out, "  GPU: none (runtime %s): host memory only\n",
            runtime_name(i->gpuRuntime));
  fprintf(out, "  NIC: %s, PCI %s, NUMA %d\n", i->nicName,
          i->nicBusId[0] ? i->nicBusId : "- (virtual)", (int)i->nicNumaNode);
  fprintf(out, "  why: %s\n", tool_nic_reason(i));
  print_rails(out, i);
  tool_gid_text(i->gid, gid, sizeof gid);
  fprintf(out, "  port %u, GID %d %s (%s)\n", (unsigned)i->port,
          (int)i->gidIndex, gid, gid_type_name(i->gidType));
  fprintf(out, "  GID preference: RoCE v2 IPv4-mapped > v2 global > v2 "
               "link-local > v1 global > v1 link-local\n");
  print_reg_modes(out, i->regModes);
  fprintf(out, "  connections: %u%s\n", (unsigned)i->maxTransfers,
          has_rails(i) && i->railsInUse > 1 ? " per rail" : "");
  fprintf(out, "  tokens: %s\n",
          i->tokenScope == hipObjTokenScopeWindow
              ? "a memory window per transfer (its range and direction only)"
              : "the whole registered buffer (no memory windows)");
}
