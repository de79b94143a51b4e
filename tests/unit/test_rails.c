/* SPDX-License-Identifier: MIT */
/* The rails policy (src/rails.c) on fake sysfs trees read by the sysfs
 * topology: 8 GPUs with 2, 4, 8 and 16 NICs, every path class, links of
 * two speeds, ports down, hints, host memory. Every device-memory choice is
 * also checked against the rule itself: no rail of a larger path class
 * than the nearest active NIC's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakes/fake_sysfs.h"
#include "platform/topology.h"
#include "rails.h"

#define GPUS 8
#define NVIDIA 0x10de
#define AMD 0x1002
#define CLASS_3D 0x030200
#define CLASS_ACCEL 0x120000

struct fixture {
  struct ho_fake_sysfs fs;
  struct ho_topology topo;
  struct ho_nic_info nics[HO_MAX_NICS];
  size_t n;
  struct ho_pci_info gpus[HO_MAX_GPUS];
  size_t n_gpus;
};

static int setup(void **state)
{
  struct fixture *f = calloc(1, sizeof *f);
  if (!f || ho_fake_sysfs_create(&f->fs) != 0 ||
      ho_topology_sysfs_init(&f->topo, f->fs.root) != hipObjSuccess) {
    free(f);
    return -1;
  }
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  struct fixture *f = *state;
  ho_fake_sysfs_destroy(&f->fs);
  free(f);
  return 0;
}

#define OK(call) assert_int_equal((call), 0)

/* ---- the host: 4 host bridges, 2 per NUMA node ---------------------------
 *
 * Host bridge h (pci0000:<B>, B = 0x40 * h, node h / 2) has root port
 * 0000:B:01.0 over a switch (upstream port B+1, downstream ports B+2:0k.0).
 * Below downstream port k (k = 0, 1) sits a second switch (upstream port
 * B+3+4k, downstream ports B+4+4k:0j.0) with GPU 2h+k at j = 0 and room for
 * NICs at j = 1..3. More NICs hang off the first switch (downstream port
 * 2..5) or off root ports 0000:B:02.0 onwards. */

static unsigned bus(int h) { return 0x40u * (unsigned)h; }

static void top(char *out, size_t cap, int h)
{
  unsigned b = bus(h);
  snprintf(out, cap, "pci0000:%02x/0000:%02x:01.0/0000:%02x:00.0", b, b,
           b + 1);
}

/* Below GPU 2h+k's own switch, slot j (0: the GPU). */
static void in_gpu_switch(char *out, size_t cap, int h, int k, int j)
{
  char t[128];
  unsigned b = bus(h);
  top(t, sizeof t, h);
  unsigned ep = j == 0 || j == 1 ? b + 5 + 4u * (unsigned)k + (unsigned)j
                                 : b + 0x18 + 4u * (unsigned)k + (unsigned)j;
  snprintf(out, cap, "%s/0000:%02x:%02x.0/0000:%02x:00.0/0000:%02x:%02x.0/"
           "0000:%02x:00.0",
           t, b + 2, k, b + 3 + 4u * (unsigned)k, b + 4 + 4u * (unsigned)k, j,
           ep);
}

/* Below the first switch of host bridge h, downstream port slot (2..5). */
static void in_top_switch(char *out, size_t cap, int h, int slot)
{
  char t[128];
  unsigned b = bus(h);
  top(t, sizeof t, h);
  snprintf(out, cap, "%s/0000:%02x:%02x.0/0000:%02x:00.0", t, b + 2, slot,
           b + 0x10 + (unsigned)slot);
}

/* At root port m (0, 1, ...: device 2 + m) of host bridge h. */
static void at_root_port(char *out, size_t cap, int h, int m)
{
  unsigned b = bus(h);
  snprintf(out, cap, "pci0000:%02x/0000:%02x:%02x.0/0000:%02x:00.0", b, b,
           2 + m, b + 0x20 + (unsigned)m);
}

static int node_of(int h) { return h / 2; }

static void gpu_bus(int g, char out[HO_BUS_ID_MAX])
{
  snprintf(out, HO_BUS_ID_MAX, "0000:%02x:00.0",
           bus(g / 2) + 5 + 4u * (unsigned)(g % 2));
}

static void add_gpus(struct fixture *f, unsigned vendor, unsigned cls)
{
  char p[256];
  for (int g = 0; g < GPUS; g++) {
    in_gpu_switch(p, sizeof p, g / 2, g % 2, 0);
    OK(ho_fake_sysfs_add_pci(&f->fs, p, vendor, cls, node_of(g / 2)));
  }
  /* Not GPUs: a NVMe drive (another class) and an Intel display. */
  at_root_port(p, sizeof p, 3, 5);
  OK(ho_fake_sysfs_add_pci(&f->fs, p, 0x144d, 0x010802, 1));
  at_root_port(p, sizeof p, 3, 6);
  OK(ho_fake_sysfs_add_pci(&f->fs, p, 0x8086, 0x030000, 1));
}

static void nic(struct fixture *f, const char *name, const char *path,
                int node, const char *rate)
{
  OK(ho_fake_sysfs_add_nic_at(&f->fs, name, path, node, rate));
}

static void read_topology(struct fixture *f)
{
  assert_int_equal(f->topo.ops->list_nics(&f->topo, f->nics, HO_MAX_NICS,
                                          &f->n),
                   hipObjSuccess);
  assert_int_equal(f->topo.ops->list_gpus(&f->topo, f->gpus, HO_MAX_GPUS,
                                          &f->n_gpus),
                   hipObjSuccess);
}

struct pick {
  struct ho_rails r;
  char primary[HO_NIC_NAME_MAX];
  struct ho_nic_choice why;
};

static hipObjOpError_t choose_for(struct fixture *f, const char *gpu_bus_id,
                                  const char *hint, unsigned max_rails,
                                  struct pick *p)
{
  struct ho_pci_info gpu;
  memset(&gpu, 0, sizeof gpu);
  if (f->topo.ops->pci_device(&f->topo, gpu_bus_id, &gpu) != hipObjSuccess) {
    memset(&gpu, 0, sizeof gpu);
    gpu.numa_node = -1;
    snprintf(gpu.bus_id, sizeof gpu.bus_id, "%s", gpu_bus_id);
  }
  struct ho_rails_in in = {f->nics, f->n, &gpu, f->gpus, f->n_gpus, -1,
                           hint, false, max_rails};
  memset(p, 0, sizeof *p);
  return ho_choose_rails(&in, &p->r, p->primary, &p->why);
}

static struct pick choose_gpu(struct fixture *f, int g)
{
  char b[HO_BUS_ID_MAX];
  gpu_bus(g, b);
  struct pick p;
  assert_int_equal(choose_for(f, b, NULL, 0, &p), hipObjSuccess);
  return p;
}

/* The rule itself: every rail is at the smallest class any active NIC has
 * from this GPU, and at the fastest rate among those; the first rail is
 * the primary NIC, chosen "closest to the GPU". */
static void assert_rule(struct fixture *f, int g, const struct pick *p)
{
  char b[HO_BUS_ID_MAX];
  struct ho_pci_info gpu;
  gpu_bus(g, b);
  assert_int_equal(f->topo.ops->pci_device(&f->topo, b, &gpu), hipObjSuccess);
  enum ho_path_class best = HO_PATH_UNKNOWN;
  for (size_t i = 0; i < f->n; i++) {
    if (!f->nics[i].active_port)
      continue;
    enum ho_path_class c = ho_path_class(gpu.pci_path, gpu.numa_node,
                                         f->nics[i].pci_path,
                                         f->nics[i].numa_node);
    if (c != HO_PATH_UNKNOWN && (best == HO_PATH_UNKNOWN || c < best))
      best = c;
  }
  assert_true(p->r.count >= 1);
  assert_int_equal(p->r.near_class, best);
  for (size_t i = 0; i < p->r.count; i++) {
    assert_int_equal(p->r.rail[i].path, best); /* never a far NIC */
    assert_int_equal(p->r.rail[i].why, HO_RAIL_NEAR_GPU);
  }
  assert_string_equal(p->primary, p->r.rail[0].name);
  assert_int_equal(p->why.why, hipObjNicChoiceClosestToGpu);
}

static void assert_rails(const struct pick *p, const char *const *names,
                         size_t n)
{
  assert_int_equal(p->r.count, n);
  for (size_t i = 0; i < n; i++)
    assert_string_equal(p->r.rail[i].name, names[i]);
}

/* ---- path classes -------------------------------------------------------- */

static void path_classes(void **state)
{
  (void)state;
  const char *gpu = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/"
                    "0000:03:00.0";
  /* Beside it below the same switch. */
  assert_int_equal(ho_path_class(gpu, 0,
                                 "pci0000:00/0000:00:01.0/0000:01:00.0/"
                                 "0000:02:01.0/0000:04:00.0",
                                 0),
                   HO_PATH_SWITCH);
  /* Another function of the same device, and the device itself. */
  assert_int_equal(ho_path_class("pci0000:00/0000:00:01.0/0000:01:00.0", 0,
                                 "pci0000:00/0000:00:01.0/0000:01:00.1", 0),
                   HO_PATH_SWITCH);
  assert_int_equal(ho_path_class(gpu, 0, gpu, 0), HO_PATH_SWITCH);
  /* One level up: through two switches. */
  assert_int_equal(ho_path_class(gpu, 0,
                                 "pci0000:00/0000:00:01.0/0000:01:00.0/"
                                 "0000:02:01.0/0000:05:00.0/0000:06:00.0/"
                                 "0000:07:00.0",
                                 0),
                   HO_PATH_SWITCHES);
  /* Another root port of the host bridge. */
  assert_int_equal(ho_path_class(gpu, 0,
                                 "pci0000:00/0000:00:02.0/0000:08:00.0", 0),
                   HO_PATH_ROOT_PORT);
  /* Another host bridge: the NUMA nodes decide. */
  assert_int_equal(ho_path_class(gpu, 0,
                                 "pci0000:40/0000:40:01.0/0000:41:00.0", 0),
                   HO_PATH_NUMA);
  assert_int_equal(ho_path_class(gpu, 0,
                                 "pci0000:40/0000:40:01.0/0000:41:00.0", 1),
                   HO_PATH_OTHER);
  assert_int_equal(ho_path_class(gpu, -1,
                                 "pci0000:40/0000:40:01.0/0000:41:00.0", -1),
                   HO_PATH_OTHER);
  /* Bridge names are compared whole, not as prefixes. */
  assert_int_equal(ho_path_class("pci0000:00/0000:00:01.0/0000:01:00.0", 0,
                                 "pci0000:00/0000:00:01.1/0000:02:00.0", 0),
                   HO_PATH_ROOT_PORT);
  /* Unknown places. */
  assert_int_equal(ho_path_class("", 0, gpu, 0), HO_PATH_UNKNOWN);
  assert_int_equal(ho_path_class(gpu, 0, "", 0), HO_PATH_UNKNOWN);
  assert_int_equal(ho_path_class(NULL, 0, gpu, 0), HO_PATH_UNKNOWN);
  assert_string_equal(ho_path_class_name(HO_PATH_SWITCH), "same switch");
  assert_string_equal(ho_path_class_name(HO_PATH_OTHER), "other");
}

/* The sysfs topology reads the places, rates and GPUs the tree holds. */
static void topology_reads_places(void **state)
{
  struct fixture *f = *state;
  char p[256];
  add_gpus(f, NVIDIA, CLASS_3D);
  in_gpu_switch(p, sizeof p, 0, 0, 1);
  nic(f, "mlx5_0", p, 0, "400 Gb/sec (4X NDR)");
  at_root_port(p, sizeof p, 1, 0);
  nic(f, "mlx5_1", p, 0, "2.5 Gb/sec (1X SDR)");
  OK(ho_fake_sysfs_add_nic(&f->fs, "rxe0", NULL, -1));
  OK(ho_fake_sysfs_set_port_state(&f->fs, "rxe0", 1, "4: ACTIVE"));
  read_topology(f);
  assert_int_equal(f->n, 3);
  in_gpu_switch(p, sizeof p, 0, 0, 1);
  assert_string_equal(f->nics[0].pci_path, p);
  assert_string_equal(f->nics[0].bus_id, "0000:06:00.0");
  assert_int_equal(f->nics[0].rate_mbps, 400000);
  assert_int_equal(f->nics[1].rate_mbps, 2500);
  assert_int_equal(f->nics[1].numa_node, 0);
  assert_string_equal(f->nics[2].name, "rxe0");
  assert_string_equal(f->nics[2].pci_path, "");
  assert_int_equal(f->nics[2].rate_mbps, 0);
  /* Eight GPUs in bus id order; the drive and the Intel display are not. */
  assert_int_equal(f->n_gpus, GPUS);
  for (int g = 0; g < GPUS; g++) {
    char b[HO_BUS_ID_MAX];
    gpu_bus(g, b);
    assert_string_equal(f->gpus[g].bus_id, b);
    in_gpu_switch(p, sizeof p, g / 2, g % 2, 0);
    assert_string_equal(f->gpus[g].pci_path, p);
    assert_int_equal(f->gpus[g].numa_node, node_of(g / 2));
  }
  struct ho_pci_info d;
  assert_int_equal(f->topo.ops->pci_device(&f->topo, "0000:ee:00.0", &d),
                   hipObjNicNotFound);
  assert_int_equal(f->topo.ops->pci_device(&f->topo, "../../etc", &d),
                   hipObjNicNotFound);
  /* AMD Instinct parts are processing accelerators. */
  struct fixture *g = NULL;
  assert_int_equal(setup((void **)&g), 0);
  add_gpus(g, AMD, CLASS_ACCEL);
  read_topology(g);
  assert_int_equal(g->n_gpus, GPUS);
  teardown((void **)&g);
}

/* ---- 8 GPUs ---------------------------------------------------------------- */

/* A NIC beside each GPU below its own switch: that NIC alone. */
static void eight_nics_one_per_gpu(void **state)
{
  struct fixture *f = *state;
  char p[256], name[16];
  add_gpus(f, NVIDIA, CLASS_3D);
  for (int n = 0; n < 8; n++) {
    in_gpu_switch(p, sizeof p, n / 2, n % 2, 1);
    snprintf(name, sizeof name, "mlx5_%d", n);
    nic(f, name, p, node_of(n / 2), "400 Gb/sec (4X NDR)");
  }
  read_topology(f);
  for (int g = 0; g < GPUS; g++) {
    struct pick p8 = choose_gpu(f, g);
    assert_rule(f, g, &p8);
    snprintf(name, sizeof name, "mlx5_%d", g);
    const char *want[] = {name};
    assert_rails(&p8, want, 1);
    assert_int_equal(p8.r.near_class, HO_PATH_SWITCH);
    assert_int_equal(p8.r.near, 1);
    assert_int_equal(p8.r.gpus, 1);
    assert_int_equal(p8.r.gpu_index, 0);
    assert_int_equal(p8.r.rail[0].rate_mbps, 400000);
  }
}

/* Two NICs on each first-level switch, shared by its two GPUs: L 2, G 2,
 * one rail each, the GPU's index picking which. */
static void eight_nics_shared_by_pairs(void **state)
{
  struct fixture *f = *state;
  char p[256], name[16];
  add_gpus(f, NVIDIA, CLASS_3D);
  for (int n = 0; n < 8; n++) {
    in_top_switch(p, sizeof p, n / 2, 2 + n % 2);
    snprintf(name, sizeof name, "mlx5_%d", n);
    nic(f, name, p, node_of(n / 2), "200 Gb/sec (4X HDR)");
  }
  read_topology(f);
  for (int g = 0; g < GPUS; g++) {
    struct pick p8 = choose_gpu(f, g);
    assert_rule(f, g, &p8);
    snprintf(name, sizeof name, "mlx5_%d", g);
    const char *want[] = {name};
    assert_rails(&p8, want, 1);
    assert_int_equal(p8.r.near_class, HO_PATH_SWITCHES);
    assert_int_equal(p8.r.near, 2);
    assert_int_equal(p8.r.gpus, 2);
    assert_int_equal(p8.r.gpu_index, g % 2);
  }
}

/* One NIC per first-level switch: both of its GPUs use it. */
static void four_nics(void **state)
{
  struct fixture *f = *state;
  char p[256], name[16];
  add_gpus(f, NVIDIA, CLASS_3D);
  for (int n = 0; n < 4; n++) {
    in_top_switch(p, sizeof p, n, 2);
    snprintf(name, sizeof name, "mlx5_%d", n);
    nic(f, name, p, node_of(n), "400 Gb/sec (4X NDR)");
  }
  read_topology(f);
  for (int g = 0; g < GPUS; g++) {
    struct pick p4 = choose_gpu(f, g);
    assert_rule(f, g, &p4);
    snprintf(name, sizeof name, "mlx5_%d", g / 2);
    const char *want[] = {name};
    assert_rails(&p4, want, 1);
    assert_int_equal(p4.r.near_class, HO_PATH_SWITCHES);
    assert_int_equal(p4.r.gpus, 2);
  }
}

/* One NIC per socket at a root port of its first host bridge: root port
 * for two GPUs, NUMA node for the two on the other bridge; never the other
 * socket's. Four GPUs share each. */
static void two_nics(void **state)
{
  struct fixture *f = *state;
  char p[256];
  add_gpus(f, NVIDIA, CLASS_3D);
  at_root_port(p, sizeof p, 0, 0);
  nic(f, "mlx5_0", p, 0, "400 Gb/sec (4X NDR)");
  at_root_port(p, sizeof p, 2, 0);
  nic(f, "mlx5_1", p, 1, "400 Gb/sec (4X NDR)");
  read_topology(f);
  for (int g = 0; g < GPUS; g++) {
    struct pick p2 = choose_gpu(f, g);
    assert_rule(f, g, &p2);
    const char *want[] = {g < 4 ? "mlx5_0" : "mlx5_1"};
    assert_rails(&p2, want, 1);
    assert_int_equal(p2.r.near_class,
                     g % 4 < 2 ? HO_PATH_ROOT_PORT : HO_PATH_NUMA);
    assert_int_equal(p2.r.gpus, 4);
    assert_int_equal(p2.r.gpu_index, g % 4);
  }
}

/* Two NICs beside each GPU: L 2, G 1, both are rails; HIPOBJ_MAX_RAILS 1
 * keeps the first. */
static void sixteen_nics(void **state)
{
  struct fixture *f = *state;
  char p[256], name[16];
  add_gpus(f, NVIDIA, CLASS_3D);
  for (int n = 0; n < 16; n++) {
    int g = n / 2;
    in_gpu_switch(p, sizeof p, g / 2, g % 2, 1 + n % 2);
    snprintf(name, sizeof name, "mlx5_%c", 'a' + n);
    nic(f, name, p, node_of(g / 2), "400 Gb/sec (4X NDR)");
  }
  read_topology(f);
  for (int g = 0; g < GPUS; g++) {
    struct pick p16 = choose_gpu(f, g);
    assert_rule(f, g, &p16);
    char a[16], b[16];
    snprintf(a, sizeof a, "mlx5_%c", 'a' + 2 * g);
    snprintf(b, sizeof b, "mlx5_%c", 'a' + 2 * g + 1);
    const char *want[] = {a, b};
    assert_rails(&p16, want, 2);
    assert_int_equal(p16.r.near, 2);
    assert_int_equal(p16.r.gpus, 1);
    char bus_id[HO_BUS_ID_MAX];
    gpu_bus(g, bus_id);
    struct pick one;
    assert_int_equal(choose_for(f, bus_id, NULL, 1, &one), hipObjSuccess);
    assert_rails(&one, want, 1);
  }
}

/* Four NICs on host bridge 0's first switch, the nearest for its two GPUs;
 * one NIC on each other bridge's: ceil(4/2) = 2 rails each for GPUs 0 and
 * 1, disjoint, from index i * 2. */
static void four_nics_two_gpus_two_rails_each(void **state)
{
  struct fixture *f = *state;
  char p[256], name[16];
  add_gpus(f, NVIDIA, CLASS_3D);
  for (int n = 0; n < 4; n++) {
    in_top_switch(p, sizeof p, 0, 2 + n);
    snprintf(name, sizeof name, "mlx5_%d", n);
    nic(f, name, p, 0, "400 Gb/sec (4X NDR)");
  }
  for (int h = 1; h < 4; h++) {
    in_top_switch(p, sizeof p, h, 2);
    snprintf(name, sizeof name, "mlx5_%d", 3 + h);
    nic(f, name, p, node_of(h), "400 Gb/sec (4X NDR)");
  }
  read_topology(f);
  struct pick p0 = choose_gpu(f, 0), p1 = choose_gpu(f, 1);
  assert_rule(f, 0, &p0);
  assert_rule(f, 1, &p1);
  const char *want0[] = {"mlx5_0", "mlx5_1"};
  const char *want1[] = {"mlx5_2", "mlx5_3"};
  assert_rails(&p0, want0, 2);
  assert_rails(&p1, want1, 2);
  assert_int_equal(p1.r.near, 4);
  assert_int_equal(p1.r.gpus, 2);
  assert_int_equal(p1.r.gpu_index, 1);
  for (int g = 2; g < GPUS; g++) {
    struct pick pg = choose_gpu(f, g);
    assert_rule(f, g, &pg);
    snprintf(name, sizeof name, "mlx5_%d", 3 + g / 2);
    const char *want[] = {name};
    assert_rails(&pg, want, 1);
  }
}

/* Four NICs on one switch, and nothing nearer for any GPU: all eight share
 * them (G 8, L 4), one rail each, round the four by GPU index, whatever
 * the class (switches, NUMA node, other). */
static void four_nics_for_eight_gpus(void **state)
{
  struct fixture *f = *state;
  char p[256], name[16];
  add_gpus(f, NVIDIA, CLASS_3D);
  for (int n = 0; n < 4; n++) {
    in_top_switch(p, sizeof p, 0, 2 + n);
    snprintf(name, sizeof name, "mlx5_%d", n);
    nic(f, name, p, 0, "400 Gb/sec (4X NDR)");
  }
  read_topology(f);
  for (int g = 0; g < GPUS; g++) {
    struct pick pg = choose_gpu(f, g);
    assert_rule(f, g, &pg);
    snprintf(name, sizeof name, "mlx5_%d", g % 4);
    const char *want[] = {name};
    assert_rails(&pg, want, 1);
    assert_int_equal(pg.r.gpus, 8);
    assert_int_equal(pg.r.gpu_index, g);
    assert_int_equal(pg.r.near_class, g < 2   ? HO_PATH_SWITCHES
                                      : g < 4 ? HO_PATH_NUMA
                                              : HO_PATH_OTHER);
  }
}

/* The fastest link of the nearest class; a port down is no rail; a faster
 * NIC further away loses to a slower near one. */
static void speed_and_state(void **state)
{
  struct fixture *f = *state;
  char p[256];
  add_gpus(f, NVIDIA, CLASS_3D);
  in_gpu_switch(p, sizeof p, 0, 0, 1);
  nic(f, "mlx5_0", p, 0, "200 Gb/sec (4X HDR)");
  in_gpu_switch(p, sizeof p, 0, 0, 2);
  nic(f, "mlx5_1", p, 0, "400 Gb/sec (4X NDR)");
  in_gpu_switch(p, sizeof p, 0, 0, 3);
  nic(f, "mlx5_2", p, 0, "400 Gb/sec (4X NDR)");
  in_top_switch(p, sizeof p, 0, 2);
  nic(f, "mlx5_3", p, 0, "800 Gb/sec (4X XDR)");
  read_topology(f);
  struct pick a = choose_gpu(f, 0);
  assert_rule(f, 0, &a);
  const char *want[] = {"mlx5_1", "mlx5_2"};
  assert_rails(&a, want, 2);
  /* Both 400G ports down: the 200G one beside the GPU. */
  OK(ho_fake_sysfs_set_port_state(&f->fs, "mlx5_1", 1, "1: DOWN"));
  OK(ho_fake_sysfs_set_port_state(&f->fs, "mlx5_2", 1, "1: DOWN"));
  read_topology(f);
  struct pick b = choose_gpu(f, 0);
  assert_rule(f, 0, &b);
  const char *want_b[] = {"mlx5_0"};
  assert_rails(&b, want_b, 1);
  /* All three down: the 800G one through two switches. */
  OK(ho_fake_sysfs_set_port_state(&f->fs, "mlx5_0", 1, "1: DOWN"));
  read_topology(f);
  struct pick c = choose_gpu(f, 0);
  assert_rule(f, 0, &c);
  const char *want_c[] = {"mlx5_3"};
  assert_rails(&c, want_c, 1);
  assert_int_equal(c.r.near_class, HO_PATH_SWITCHES);
}

/* ---- overrides and fallbacks ---------------------------------------------- */

/* nicHint is the list of rails: the one closest to the GPU first, then the
 * others as listed, reported with their classes; names not active are
 * left out. */
static void hint_is_the_list(void **state)
{
  struct fixture *f = *state;
  char p[256], name[16];
  add_gpus(f, NVIDIA, CLASS_3D);
  for (int n = 0; n < 8; n++) {
    in_gpu_switch(p, sizeof p, n / 2, n % 2, 1);
    snprintf(name, sizeof name, "mlx5_%d", n);
    nic(f, name, p, node_of(n / 2), "400 Gb/sec (4X NDR)");
  }
  OK(ho_fake_sysfs_set_port_state(&f->fs, "mlx5_3", 1, "1: DOWN"));
  read_topology(f);
  char b[HO_BUS_ID_MAX];
  gpu_bus(0, b);
  struct pick p8;
  assert_int_equal(choose_for(f, b, "mlx5_6, mlx5_3,mlx5_0,mlx5_6,nosuch",
                              0, &p8),
                   hipObjSuccess);
  const char *want[] = {"mlx5_0", "mlx5_6"};
  assert_rails(&p8, want, 2);
  assert_string_equal(p8.primary, "mlx5_0");
  assert_int_equal(p8.r.rail[0].why, HO_RAIL_HINT);
  assert_int_equal(p8.r.rail[0].path, HO_PATH_SWITCH);
  assert_int_equal(p8.r.rail[1].why, HO_RAIL_HINT);
  assert_int_equal(p8.r.rail[1].path, HO_PATH_OTHER); /* as asked */
  assert_int_equal(p8.r.near, 0);
  /* A name the topology does not list is taken as given, alone. */
  assert_int_equal(choose_for(f, b, "mlx5_9", 0, &p8), hipObjSuccess);
  const char *given[] = {"mlx5_9"};
  assert_rails(&p8, given, 1);
  assert_int_equal(p8.why.why, hipObjNicChoiceHint);
}

/* Without the GPU's place in the tree: the NIC closest by bus id, alone,
 * as before rails. */
static void unknown_place_closest_bus_id(void **state)
{
  struct fixture *f = *state;
  char p[256];
  at_root_port(p, sizeof p, 0, 0);
  nic(f, "mlx5_0", p, 0, NULL);
  at_root_port(p, sizeof p, 2, 0);
  nic(f, "mlx5_1", p, 1, NULL);
  read_topology(f);
  struct pick u;
  assert_int_equal(choose_for(f, "0000:a1:00.0", NULL, 0, &u), hipObjSuccess);
  const char *want[] = {"mlx5_1"}; /* 0000:a0:00.0 is nearer than 0000:20 */
  assert_rails(&u, want, 1);
  assert_int_equal(u.r.rail[0].why, HO_RAIL_CLOSEST_BUS_ID);
  assert_int_equal(u.r.near, 0);
  assert_int_equal(u.why.why, hipObjNicChoiceClosestToGpu);
}

/* Host memory: the NICs on the calling CPU's node (the tree puts every CPU
 * on node 1), at their fastest rate; none known: the first active alone. */
static void host_memory_numa_local(void **state)
{
  struct fixture *f = *state;
  char p[256];
  at_root_port(p, sizeof p, 0, 0);
  nic(f, "mlx5_0", p, 0, "400 Gb/sec (4X NDR)");
  at_root_port(p, sizeof p, 2, 0);
  nic(f, "mlx5_1", p, 1, "400 Gb/sec (4X NDR)");
  at_root_port(p, sizeof p, 3, 0);
  nic(f, "mlx5_2", p, 1, "400 Gb/sec (4X NDR)");
  at_root_port(p, sizeof p, 3, 1);
  nic(f, "mlx5_3", p, 1, "100 Gb/sec (4X EDR)");
  read_topology(f);
  struct ho_rails_in in = {f->nics, f->n, NULL, NULL, 0, -1, NULL, true, 0};
  struct pick h;
  /* No node known: the first active NIC. */
  in.cpu_numa_node = f->topo.ops->cpu_numa_node(&f->topo);
  assert_int_equal(in.cpu_numa_node, -1);
  assert_int_equal(ho_choose_rails(&in, &h.r, h.primary, &h.why),
                   hipObjSuccess);
  const char *first[] = {"mlx5_0"};
  assert_rails(&h, first, 1);
  assert_int_equal(h.r.rail[0].why, HO_RAIL_FIRST_ACTIVE);
  OK(ho_fake_sysfs_set_node_cpus(&f->fs, 0, ""));
  OK(ho_fake_sysfs_set_node_cpus(&f->fs, 1, "0-1,2-100000"));
  in.cpu_numa_node = f->topo.ops->cpu_numa_node(&f->topo);
  assert_int_equal(in.cpu_numa_node, 1);
  assert_int_equal(ho_choose_rails(&in, &h.r, h.primary, &h.why),
                   hipObjSuccess);
  const char *local[] = {"mlx5_1", "mlx5_2"};
  assert_rails(&h, local, 2);
  assert_string_equal(h.primary, "mlx5_1");
  assert_int_equal(h.why.why, hipObjNicChoiceFirstActive);
  assert_int_equal(h.r.rail[1].why, HO_RAIL_NUMA_LOCAL);
  assert_int_equal(h.r.rail[1].path, HO_PATH_NUMA);
  /* Without the flag, host memory still needs a hint. */
  in.first_active = false;
  assert_int_equal(ho_choose_rails(&in, &h.r, h.primary, &h.why),
                   hipObjNicNotFound);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(path_classes),
      cmocka_unit_test_setup_teardown(topology_reads_places, setup, teardown),
      cmocka_unit_test_setup_teardown(eight_nics_one_per_gpu, setup, teardown),
      cmocka_unit_test_setup_teardown(eight_nics_shared_by_pairs, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(four_nics, setup, teardown),
      cmocka_unit_test_setup_teardown(two_nics, setup, teardown),
      cmocka_unit_test_setup_teardown(sixteen_nics, setup, teardown),
      cmocka_unit_test_setup_teardown(four_nics_two_gpus_two_rails_each,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(four_nics_for_eight_gpus, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(speed_and_state, setup, teardown),
      cmocka_unit_test_setup_teardown(hint_is_the_list, setup, teardown),
      cmocka_unit_test_setup_teardown(unknown_place_closest_bus_id, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(host_memory_numa_local, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
