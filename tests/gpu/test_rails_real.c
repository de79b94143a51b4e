/* SPDX-License-Identifier: MIT */
/* The rails policy (src/rails.c) against this machine's real PCI tree
 * (issue 22): every GPU the sysfs topology lists and its place; the path
 * class from it to every other GPU and to every PCI network device, in
 * the terms of `nvidia-smi topo -m` (PIX: same switch, PXB: switches,
 * PHB: root port, NODE: another host bridge of the NUMA node, SYS:
 * other), to set beside that command's matrix; what ho_choose_rails()
 * decides for the GPU's memory with the RDMA NICs the machine has; and
 * what it would decide were the network devices active RDMA NICs.
 *
 * Checks: each GPU's place in the tree is known; with no RDMA NIC at all
 * the choice is NicNotFound (a GPU without a near NIC is reported as
 * such, never given a far one silently); with the stand-ins, every rail
 * is at the smallest class any of them has from the GPU. Prints one line
 * per check and "N passed, N failed"; exit 1 on a failure, 77 without a
 * GPU. */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/topology.h"
#include "rails.h"

static int passed, failed;

static void check(bool ok, const char *what, const char *bus)
{
  printf("%s %s (GPU %s)\n", ok ? "PASS" : "FAIL", what, bus);
  ok ? passed++ : failed++;
}

static const char *smi_name(enum ho_path_class c)
{
  static const char *const n[] = {"?", "PIX", "PXB", "PHB", "NODE", "SYS"};
  return (unsigned)c < sizeof n / sizeof n[0] ? n[c] : "?";
}

/* The PCI network devices (/sys/class/net/X/device), as stand-in NICs:
 * named after the interface, active, their place from the topology. */
static size_t net_devices(const struct ho_topology *t, struct ho_nic_info *out,
                          size_t cap)
{
  DIR *d = opendir("/sys/class/net");
  size_t n = 0;
  struct dirent *de;
  while (d && n < cap && (de = readdir(d))) {
    char link[PATH_MAX], real[PATH_MAX];
    if (de->d_name[0] == '.' ||
        snprintf(link, sizeof link, "/sys/class/net/%s/device", de->d_name) >=
            (int)sizeof link ||
        !realpath(link, real))
      continue;
    const char *bus = strrchr(real, '/');
    struct ho_pci_info pci;
    if (!bus || t->ops->pci_device(t, bus + 1, &pci) != hipObjSuccess)
      continue; /* not a PCI device */
    struct ho_nic_info *x = &out[n++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%.63s", de->d_name);
    snprintf(x->bus_id, sizeof x->bus_id, "%s", pci.bus_id);
    memcpy(x->pci_path, pci.pci_path, sizeof x->pci_path);
    x->numa_node = pci.numa_node;
    x->active_port = 1;
  }
  if (d)
    closedir(d);
  return n;
}

static hipObjOpError_t choose(const struct ho_nic_info *nics, size_t n,
                              const struct ho_pci_info *gpu,
                              const struct ho_pci_info *gpus, size_t n_gpus,
                              struct ho_rails *r)
{
  struct ho_rails_in in = {.nics = nics, .n = n, .gpu = gpu, .gpus = gpus,
                           .n_gpus = n_gpus, .cpu_numa_node = -1};
  char primary[HO_NIC_NAME_MAX];
  struct ho_nic_choice why;
  return ho_choose_rails(&in, r, primary, &why);
}

static void print_rails(const struct ho_rails *r)
{
  printf("  near set: %u NIC(s) at class %s, shared by %u GPU(s), this one "
         "index %u; rails:",
         r->near, ho_path_class_name(r->near_class), r->gpus, r->gpu_index);
  for (size_t k = 0; k < r->count; k++)
    printf(" %s (%s)", r->rail[k].name, ho_path_class_name(r->rail[k].path));
  printf("\n");
}

/* The GPU's classes to the other GPUs and to the stand-ins. */
static void print_classes(const struct ho_pci_info *g,
                          const struct ho_pci_info *gpus, size_t n_gpus,
                          const struct ho_nic_info *net, size_t n_net)
{
  printf("GPU %s numa %d path /sys/devices/%s\n", g->bus_id, g->numa_node,
         g->pci_path);
  for (size_t j = 0; j < n_gpus; j++)
    if (strcmp(gpus[j].bus_id, g->bus_id) != 0)
      printf("  to GPU %s: %s (%s)\n", gpus[j].bus_id,
             smi_name(ho_path_class(g->pci_path, g->numa_node,
                                    gpus[j].pci_path, gpus[j].numa_node)),
             ho_path_class_name(ho_path_class(g->pci_path, g->numa_node,
                                              gpus[j].pci_path,
                                              gpus[j].numa_node)));
  for (size_t j = 0; j < n_net; j++) {
    enum ho_path_class c = ho_path_class(g->pci_path, g->numa_node,
                                         net[j].pci_path, net[j].numa_node);
    printf("  to %s (%s, numa %d): %s (%s)\n", net[j].name, net[j].bus_id,
           net[j].numa_node, smi_name(c), ho_path_class_name(c));
  }
}

/* Every rail at the smallest class any stand-in has from the GPU. */
static bool rails_nearest(const struct ho_rails *r, const struct ho_pci_info *g,
                          const struct ho_nic_info *net, size_t n_net)
{
  enum ho_path_class best = HO_PATH_OTHER;
  for (size_t j = 0; j < n_net; j++) {
    enum ho_path_class c = ho_path_class(g->pci_path, g->numa_node,
                                         net[j].pci_path, net[j].numa_node);
    if (c != HO_PATH_UNKNOWN && c < best)
      best = c;
  }
  for (size_t k = 0; k < r->count; k++)
    if (r->rail[k].path != best)
      return false;
  return true;
}

static void one_gpu(const struct ho_pci_info *g, const struct ho_pci_info *gpus,
                    size_t n_gpus, const struct ho_nic_info *nics, size_t n,
                    const struct ho_nic_info *net, size_t n_net)
{
  struct ho_rails r;
  print_classes(g, gpus, n_gpus, net, n_net);
  check(g->pci_path[0] != '\0', "the GPU's place in the PCI tree is known",
        g->bus_id);
  hipObjOpError_t e = choose(nics, n, g, gpus, n_gpus, &r);
  printf("  with this machine's %zu RDMA NIC(s): %s\n", n,
         e == hipObjSuccess ? "rails chosen" : "NicNotFound: no near NIC");
  if (e == hipObjSuccess)
    print_rails(&r);
  if (n == 0)
    check(e == hipObjNicNotFound, "no RDMA NIC: reported as no near NIC",
          g->bus_id);
  if (n_net == 0)
    return;
  e = choose(net, n_net, g, gpus, n_gpus, &r);
  printf("  were the %zu network device(s) RDMA NICs:\n", n_net);
  if (e == hipObjSuccess)
    print_rails(&r);
  check(e == hipObjSuccess && rails_nearest(&r, g, net, n_net),
        "stand-in NICs: every rail at the nearest class", g->bus_id);
}

int main(void)
{
  struct ho_topology t;
  static struct ho_pci_info gpus[HO_MAX_GPUS];
  static struct ho_nic_info nics[HO_MAX_NICS], net[HO_MAX_NICS];
  size_t n_gpus = 0, n = 0;
  if (ho_topology_sysfs_init(&t, "") != hipObjSuccess ||
      t.ops->list_gpus(&t, gpus, HO_MAX_GPUS, &n_gpus) != hipObjSuccess) {
    printf("FAIL: the sysfs topology\n");
    return 1;
  }
  if (t.ops->list_nics(&t, nics, HO_MAX_NICS, &n) != hipObjSuccess)
    n = 0;
  size_t n_net = net_devices(&t, net, HO_MAX_NICS);
  printf("%zu GPU(s), %zu RDMA NIC(s), %zu PCI network device(s)\n", n_gpus,
         n, n_net);
  if (n_gpus == 0) {
    printf("SKIP: no GPU on the PCI bus\n");
    return 77;
  }
  for (size_t i = 0; i < n_gpus; i++)
    one_gpu(&gpus[i], gpus, n_gpus, nics, n, net, n_net);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
