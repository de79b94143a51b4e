/* SPDX-License-Identifier: MIT */
/* The sysfs topology against fake sysfs trees, well-formed and not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakes/fake_sysfs.h"
#include "platform/topology.h"

struct fixture {
  struct ho_fake_sysfs fs;
  struct ho_topology topo;
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

static size_t list(struct fixture *f, struct ho_nic_info *out, size_t cap)
{
  size_t count = 12345;
  assert_int_equal(f->topo.ops->list_nics(&f->topo, out, cap, &count),
                   hipObjSuccess);
  assert_true(count <= cap);
  return count;
}

/* One NIC, listed alone. */
static struct ho_nic_info only_nic(struct fixture *f)
{
  struct ho_nic_info n[4];
  assert_int_equal(list(f, n, 4), 1);
  return n[0];
}

static enum ho_gid_type gid_type(struct fixture *f, const char *nic, int port,
                                 int index)
{
  return f->topo.ops->gid_type(&f->topo, nic, port, index);
}

/* ---- init ---------------------------------------------------------------- */

static void test_init(void **state)
{
  (void)state;
  struct ho_topology t;
  assert_int_equal(ho_topology_sysfs_init(&t, NULL), hipObjSuccess);
  assert_ptr_equal(t.ops, &ho_topology_sysfs_ops);
  assert_string_equal(t.root, "");
  assert_int_equal(ho_topology_sysfs_init(&t, "/"), hipObjSuccess);
  assert_string_equal(t.root, "");
  assert_int_equal(ho_topology_sysfs_init(&t, "/tmp/x///"), hipObjSuccess);
  assert_string_equal(t.root, "/tmp/x");
  assert_int_equal(ho_topology_sysfs_init(NULL, "/"), hipObjInvalidValue);

  char *huge = malloc(PATH_MAX + 10);
  assert_non_null(huge);
  memset(huge, 'a', PATH_MAX + 9);
  huge[PATH_MAX + 9] = '\0';
  memset(&t, 0x5a, sizeof t);
  assert_int_equal(ho_topology_sysfs_init(&t, huge), hipObjInvalidValue);
  assert_int_equal((unsigned char)t.root[0], 0x5a); /* untouched */
  free(huge);
}

/* The real /sys: whatever is there, listing works. */
static void test_real_sysfs(void **state)
{
  (void)state;
  struct ho_topology t;
  assert_int_equal(ho_topology_sysfs_init(&t, NULL), hipObjSuccess);
  struct ho_nic_info n[HO_MAX_NICS];
  size_t count = 0;
  assert_int_equal(t.ops->list_nics(&t, n, HO_MAX_NICS, &count),
                   hipObjSuccess);
  for (size_t i = 0; i < count; i++)
    printf("# %s bus=%s numa=%d port=%d\n", n[i].name, n[i].bus_id,
           n[i].numa_node, n[i].active_port);
}

/* ---- listing ------------------------------------------------------------- */

static void test_empty_tree(void **state)
{
  struct fixture *f = *state;
  struct ho_nic_info n[2];
  assert_int_equal(list(f, n, 2), 0);
}

static void test_no_class_dir(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_remove(&f->fs, "sys"));
  struct ho_nic_info n[2];
  assert_int_equal(list(f, n, 2), 0);
  /* sys/class/infiniband as a file: no devices either. */
  OK(ho_fake_sysfs_write(&f->fs, "sys/class/infiniband", "x", 1));
  assert_int_equal(list(f, n, 2), 0);
}

static void test_invalid_arguments(void **state)
{
  struct fixture *f = *state;
  struct ho_nic_info n[1];
  size_t count = 7;
  const struct ho_topology_ops *ops = f->topo.ops;
  assert_int_equal(ops->list_nics(&f->topo, n, 1, NULL), hipObjInvalidValue);
  assert_int_equal(ops->list_nics(&f->topo, NULL, 1, &count),
                   hipObjInvalidValue);
  assert_int_equal(ops->list_nics(NULL, n, 1, &count), hipObjInvalidValue);
  assert_int_equal(count, 7);
  assert_int_equal(ops->list_nics(&f->topo, NULL, 0, &count), hipObjSuccess);
  assert_int_equal(count, 0);
}

static void test_three_nics_sorted(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "mlx5_1", "0000:c1:00.0", 1));
  OK(ho_fake_sysfs_add_nic(&f->fs, "rxe0", NULL, 0));
  OK(ho_fake_sysfs_add_nic(&f->fs, "bnxt_re0", "0000:41:00.1", 0));
  OK(ho_fake_sysfs_set_port_state(&f->fs, "mlx5_1", 1, "4: ACTIVE"));
  OK(ho_fake_sysfs_set_port_state(&f->fs, "rxe0", 1, "4: ACTIVE"));
  OK(ho_fake_sysfs_set_port_state(&f->fs, "bnxt_re0", 1, "1: DOWN"));

  struct ho_nic_info n[4];
  assert_int_equal(list(f, n, 4), 3);
  assert_string_equal(n[0].name, "bnxt_re0");
  assert_string_equal(n[0].bus_id, "0000:41:00.1");
  assert_int_equal(n[0].numa_node, 0);
  assert_int_equal(n[0].active_port, 0);
  assert_string_equal(n[1].name, "mlx5_1");
  assert_string_equal(n[1].bus_id, "0000:c1:00.0");
  assert_int_equal(n[1].numa_node, 1);
  assert_int_equal(n[1].active_port, 1);
  assert_string_equal(n[2].name, "rxe0");
  assert_string_equal(n[2].bus_id, "");
  assert_int_equal(n[2].numa_node, -1);
  assert_int_equal(n[2].active_port, 1);
}

static void test_capacity(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "c", NULL, 0));
  OK(ho_fake_sysfs_add_nic(&f->fs, "a", NULL, 0));
  OK(ho_fake_sysfs_add_nic(&f->fs, "b", NULL, 0));
  struct ho_nic_info n[3];
  memset(n, 0x5a, sizeof n);
  assert_int_equal(list(f, n, 2), 2);
  assert_string_equal(n[0].name, "a");
  assert_string_equal(n[1].name, "b");
  assert_int_equal((unsigned char)n[2].name[0], 0x5a); /* beyond cap */
  assert_int_equal(list(f, n, 0), 0);
}

/* More than HO_MAX_NICS devices: the first HO_MAX_NICS names, in order. */
static void test_many_nics(void **state)
{
  struct fixture *f = *state;
  for (int i = 99; i >= 0; i--) {
    char name[16];
    snprintf(name, sizeof name, "nic%02d", i);
    OK(ho_fake_sysfs_add_nic(&f->fs, name, NULL, 0));
  }
  static struct ho_nic_info n[128];
  assert_int_equal(list(f, n, 128), HO_MAX_NICS);
  for (int i = 0; i < HO_MAX_NICS; i++) {
    char name[16];
    snprintf(name, sizeof name, "nic%02d", i);
    assert_string_equal(n[i].name, name);
  }
}

/* Entries that are no device directories are skipped. */
static void test_odd_class_entries(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "mlx5_0", "0000:c1:00.0", 0));
  OK(ho_fake_sysfs_write(&f->fs, "sys/class/infiniband/afile", "x\n", 2));
  OK(ho_fake_sysfs_mkdir(&f->fs, "sys/class/infiniband/.hidden"));
  OK(ho_fake_sysfs_symlink(&f->fs, "sys/class/infiniband/broken",
                           "../../devices/nowhere"));
  OK(ho_fake_sysfs_symlink(&f->fs, "sys/class/infiniband/loop",
                           "loop"));
  char longname[HO_NIC_NAME_MAX + 1];
  memset(longname, 'l', HO_NIC_NAME_MAX);
  longname[HO_NIC_NAME_MAX] = '\0';
  OK(ho_fake_sysfs_add_nic(&f->fs, longname, NULL, 0));
  struct ho_nic_info n = only_nic(f);
  assert_string_equal(n.name, "mlx5_0");
}

/* ---- bus id --------------------------------------------------------------- */

/* A device directory (not a link) with PCI_SLOT_NAME in its uevent. */
static void test_bus_id_from_uevent(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "ionic_0", NULL, 0));
  static const char uevent[] = "DRIVER=ionic\nPCI_CLASS=20000\n"
                               "PCI_ID=1DD8:1002\nPCI_SLOT_NAME=0000:e1:00.0\n"
                               "MODALIAS=pci:v00001DD8\n";
  OK(ho_fake_sysfs_write_nic(&f->fs, "ionic_0", "device/uevent", uevent,
                             sizeof uevent - 1));
  OK(ho_fake_sysfs_write_nic(&f->fs, "ionic_0", "device/numa_node", "3\n", 2));
  struct ho_nic_info n = only_nic(f);
  assert_string_equal(n.bus_id, "0000:e1:00.0");
  assert_int_equal(n.numa_node, 3);
}

/* The link names a non-PCI parent (an auxiliary device): uevent decides. */
static void test_bus_id_link_not_pci(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "irdma0", NULL, 0));
  OK(ho_fake_sysfs_mkdir(&f->fs, "sys/devices/aux/ice.roce.0"));
  OK(ho_fake_sysfs_symlink(&f->fs,
                           "sys/devices/virtual/infiniband/irdma0/device",
                           "../../../aux/ice.roce.0"));
  assert_string_equal(only_nic(f).bus_id, "");
  static const char uevent[] = "DRIVER=irdma\nPCI_SLOT_NAME=0000:17:00.0";
  OK(ho_fake_sysfs_write(&f->fs, "sys/devices/aux/ice.roce.0/uevent", uevent,
                         sizeof uevent - 1)); /* no final newline */
  assert_string_equal(only_nic(f).bus_id, "0000:17:00.0");
}

static void test_bus_id_garbage(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", NULL, 0));
  static const char *const bad[] = {
      "PCI_SLOT_NAME=\n",
      "PCI_SLOT_NAME=garbage\n",
      "PCI_SLOT_NAME=0000:c1:00\n",
      "PCI_SLOT_NAME=0000:c1:00.8\n",
      "PCI_SLOT_NAME=0000:c1:00.0x\n",
      "PCI_SLOT_NAME= 0000:c1:00.0\n",
      "PCI_SLOT_NAME=000000000000:c1:00.0\n",
      "PCI_SLOT_NAME=0000:c1:00.0/../../x\n",
      "PCI_SLOT_NAME0000:c1:00.0\n",
      "XPCI_SLOT_NAME=0000:c1:00.0\n",
      "",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "device/uevent", bad[i],
                               strlen(bad[i])));
    struct ho_nic_info n = only_nic(f);
    if (n.bus_id[0])
      fail_msg("uevent \"%s\" gave bus id %s", bad[i], n.bus_id);
  }
  /* A NUL byte anywhere: the whole file is garbage. */
  static const char nul[] = "PCI_SLOT_NAME=0000:c1:00.0\n\0\n";
  OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "device/uevent", nul,
                             sizeof nul - 1));
  assert_string_equal(only_nic(f).bus_id, "");
}

/* uevent is read up to a limit; a key beyond it, or cut by it, is not
 * used, and nothing past the buffer is read. */
static void test_bus_id_long_uevent(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", NULL, 0));
  size_t len = 64 * 1024;
  char *big = malloc(len);
  assert_non_null(big);
  memset(big, 'A', len);
  for (size_t i = 80; i < len; i += 81)
    big[i] = '\n';
  static const char key[] = "PCI_SLOT_NAME=0000:c1:00.0\n";
  memcpy(big + len - sizeof key + 1, key, sizeof key - 1);
  OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "device/uevent", big, len));
  assert_string_equal(only_nic(f).bus_id, "");
  /* The key straddling the limit (4095 bytes read). */
  memset(big, 'A', len);
  big[4095 - 20] = '\n';
  memcpy(big + 4095 - 19, key, sizeof key - 1);
  OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "device/uevent", big, 8192));
  assert_string_equal(only_nic(f).bus_id, "");
  /* A key well inside the limit, with a long line after it. */
  memcpy(big, key, sizeof key - 1);
  OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "device/uevent", big, 8192));
  assert_string_equal(only_nic(f).bus_id, "0000:c1:00.0");
  free(big);
}

static void test_bus_id_link_forms(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", NULL, 0));
  const char *link = "sys/devices/virtual/infiniband/n0/device";
  /* Trailing slash, an absolute target, an 8-digit domain. */
  OK(ho_fake_sysfs_symlink(&f->fs, link, "../../../pci0000:00/0000:21:00.0/"));
  assert_string_equal(only_nic(f).bus_id, "0000:21:00.0");
  OK(ho_fake_sysfs_symlink(&f->fs, link, "/sys/devices/pci/0000:22:00.1"));
  assert_string_equal(only_nic(f).bus_id, "0000:22:00.1");
  OK(ho_fake_sysfs_symlink(&f->fs, link, "../../10000000:00:02.0"));
  assert_string_equal(only_nic(f).bus_id, "10000000:00:02.0");
  OK(ho_fake_sysfs_symlink(&f->fs, link, "../../nothing-pci"));
  assert_string_equal(only_nic(f).bus_id, "");
  OK(ho_fake_sysfs_symlink(&f->fs, link, "/"));
  assert_string_equal(only_nic(f).bus_id, "");
}

/* ---- NUMA node ----------------------------------------------------------- */

static void test_numa_node(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", "0000:c1:00.0", HO_FAKE_NO_NUMA));
  assert_int_equal(only_nic(f).numa_node, -1);
  const struct {
    const char *text;
    int expect;
  } cases[] = {
      {"0\n", 0},   {"7\n", 7},    {"-1\n", -1},  {"7", 7},
      {"", -1},     {"\n", -1},    {"abc\n", -1}, {"-2\n", -1},
      {"-\n", -1},  {"+1\n", -1},  {" 1\n", -1},  {"1 2\n", -1},
      {"1\n2\n", -1}, {"99999999999999999999999\n", -1}, {"65536\n", -1},
      {"0x1\n", -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    OK(ho_fake_sysfs_write(&f->fs, "sys/devices/pci0000:00/0000:c1:00.0/numa_node",
                           cases[i].text, strlen(cases[i].text)));
    int got = only_nic(f).numa_node;
    if (got != cases[i].expect)
      fail_msg("numa_node \"%s\": %d", cases[i].text, got);
  }
}

static void test_numa_node_huge_and_odd_files(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", "0000:c1:00.0", HO_FAKE_NO_NUMA));
  const char *rel = "sys/devices/pci0000:00/0000:c1:00.0/numa_node";
  size_t len = 1 << 20;
  char *big = malloc(len);
  assert_non_null(big);
  memset(big, '1', len);
  OK(ho_fake_sysfs_write(&f->fs, rel, big, len));
  assert_int_equal(only_nic(f).numa_node, -1);
  free(big);
  OK(ho_fake_sysfs_write(&f->fs, rel, "1\0", 2));
  assert_int_equal(only_nic(f).numa_node, -1);
  /* A directory, a FIFO (must not block), a link to /dev/zero. */
  OK(ho_fake_sysfs_remove(&f->fs, rel));
  OK(ho_fake_sysfs_mkdir(&f->fs, rel));
  assert_int_equal(only_nic(f).numa_node, -1);
  OK(ho_fake_sysfs_remove(&f->fs, rel));
  char path[PATH_MAX + 64];
  int n = snprintf(path, sizeof path, "%s/%s", f->fs.root, rel);
  assert_true(n > 0 && (size_t)n < sizeof path);
  OK(mkfifo(path, 0600));
  assert_int_equal(only_nic(f).numa_node, -1);
  OK(ho_fake_sysfs_symlink(&f->fs, rel, "/dev/zero"));
  assert_int_equal(only_nic(f).numa_node, -1);
}

/* ---- ports ----------------------------------------------------------------- */

static void test_first_active_port(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", "0000:c1:00.0", 0));
  assert_int_equal(only_nic(f).active_port, 0); /* no ports dir */
  OK(ho_fake_sysfs_set_port_state(&f->fs, "n0", 1, "1: DOWN"));
  assert_int_equal(only_nic(f).active_port, 0);
  OK(ho_fake_sysfs_set_port_state(&f->fs, "n0", 3, "4: ACTIVE"));
  OK(ho_fake_sysfs_set_port_state(&f->fs, "n0", 2, "4: ACTIVE"));
  OK(ho_fake_sysfs_set_port_state(&f->fs, "n0", 10, "4: ACTIVE"));
  assert_int_equal(only_nic(f).active_port, 2);
  OK(ho_fake_sysfs_set_port_state(&f->fs, "n0", 1, "4: ACTIVE"));
  assert_int_equal(only_nic(f).active_port, 1);
}

static void test_port_names_ignored(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", "0000:c1:00.0", 0));
  static const char *const names[] = {"0", "01", "-1", "+1", "abc", "256",
                                      "99999999999999999999", "1x", " 1"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char rel[128];
    snprintf(rel, sizeof rel, "ports/%s/state", names[i]);
    OK(ho_fake_sysfs_write_nic(&f->fs, "n0", rel, "4: ACTIVE\n", 10));
  }
  assert_int_equal(only_nic(f).active_port, 0);
  OK(ho_fake_sysfs_set_port_state(&f->fs, "n0", 255, "4: ACTIVE"));
  assert_int_equal(only_nic(f).active_port, 255);
}

static void test_port_state_garbage(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", "0000:c1:00.0", 0));
  static const char *const bad[] = {
      "", "\n", "4", "4\n", "ACTIVE\n", ": ACTIVE\n", "44: ACTIVE\n",
      " 4: ACTIVE\n", "04x: ACTIVE\n", "-4: ACTIVE\n", "1: DOWN\n",
      "2: INIT\n", "3: ARMED\n", "5: ACTIVE_DEFER\n", "4: ACTIVE\n4\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "ports/1/state", bad[i],
                               strlen(bad[i])));
    if (only_nic(f).active_port != 0)
      fail_msg("state \"%s\" counted as active", bad[i]);
  }
  OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "ports/1/state", "4: ACTIVE",
                             9)); /* no newline */
  assert_int_equal(only_nic(f).active_port, 1);
  OK(ho_fake_sysfs_remove(&f->fs, "sys/class/infiniband/n0/ports/1/state"));
  OK(ho_fake_sysfs_mkdir(&f->fs, "sys/class/infiniband/n0/ports/1/state"));
  assert_int_equal(only_nic(f).active_port, 0);
  OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "ports", "x", 1));
  assert_int_equal(only_nic(f).active_port, 0);
}

/* ---- GID types ------------------------------------------------------------ */

/* ---- hardware counters ---------------------------------------------------- */

static void test_hw_counter(void **state)
{
  struct fixture *f = *state;
  const struct ho_topology_ops *ops = f->topo.ops;
  unsigned long long v = 7;
  OK(ho_fake_sysfs_add_nic(&f->fs, "rxe0", NULL, 0));
  assert_int_equal(ops->hw_counter(&f->topo, "rxe0", 1, "completer_retry_err", &v),
                   hipObjNotSupported);
  assert_int_equal(v, 7);
  OK(ho_fake_sysfs_write_nic(&f->fs, "rxe0", "ports/1/hw_counters/completer_retry_err",
                             "1234\n", 5));
  assert_int_equal(ops->hw_counter(&f->topo, "rxe0", 1, "completer_retry_err", &v),
                   hipObjSuccess);
  assert_int_equal(v, 1234);
  /* another port, garbage, an empty file: not a counter */
  assert_int_equal(ops->hw_counter(&f->topo, "rxe0", 2, "completer_retry_err", &v),
                   hipObjNotSupported);
  OK(ho_fake_sysfs_write_nic(&f->fs, "rxe0", "ports/1/hw_counters/x", "12a\n", 4));
  assert_int_equal(ops->hw_counter(&f->topo, "rxe0", 1, "x", &v), hipObjNotSupported);
  OK(ho_fake_sysfs_write_nic(&f->fs, "rxe0", "ports/1/hw_counters/x", "", 0));
  assert_int_equal(ops->hw_counter(&f->topo, "rxe0", 1, "x", &v), hipObjNotSupported);
  assert_int_equal(v, 1234);
  /* names that would leave the directory, ports out of range */
  assert_int_equal(ops->hw_counter(&f->topo, "rxe0", 1, "../ports", &v), hipObjInvalidValue);
  assert_int_equal(ops->hw_counter(&f->topo, "..", 1, "x", &v), hipObjInvalidValue);
  assert_int_equal(ops->hw_counter(&f->topo, "rxe0", 0, "x", &v), hipObjInvalidValue);
  assert_int_equal(ops->hw_counter(&f->topo, "rxe0", 1, "x", NULL), hipObjInvalidValue);
  assert_int_equal(ho_topology_null_ops.hw_counter(&f->topo, "rxe0", 1,
                                                   "completer_retry_err", &v),
                   hipObjNotSupported);
}

static void test_gid_types(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "bnxt_re0", "0000:c1:00.0", 0));
  OK(ho_fake_sysfs_set_gid_type(&f->fs, "bnxt_re0", 1, 0, "IB/RoCE v1"));
  OK(ho_fake_sysfs_set_gid_type(&f->fs, "bnxt_re0", 1, 1, "RoCE v2"));
  OK(ho_fake_sysfs_set_gid_type(&f->fs, "bnxt_re0", 1, 300, "RoCE v2"));
  assert_int_equal(gid_type(f, "bnxt_re0", 1, 0), HO_GID_ROCE_V1);
  assert_int_equal(gid_type(f, "bnxt_re0", 1, 1), HO_GID_ROCE_V2);
  assert_int_equal(gid_type(f, "bnxt_re0", 1, 300), HO_GID_ROCE_V2);
  assert_int_equal(gid_type(f, "bnxt_re0", 1, 2), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, "bnxt_re0", 2, 1), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, "nothere", 1, 1), HO_GID_UNKNOWN);
  OK(ho_fake_sysfs_set_link_layer(&f->fs, "bnxt_re0", 1, "Ethernet"));
  assert_int_equal(gid_type(f, "bnxt_re0", 1, 0), HO_GID_ROCE_V1);
}

static void test_gid_type_infiniband(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "mlx5_0", "0000:c1:00.0", 0));
  OK(ho_fake_sysfs_set_link_layer(&f->fs, "mlx5_0", 1, "InfiniBand"));
  OK(ho_fake_sysfs_set_gid_type(&f->fs, "mlx5_0", 1, 0, "IB/RoCE v1"));
  assert_int_equal(gid_type(f, "mlx5_0", 1, 0), HO_GID_IB);
}

static void test_gid_type_garbage(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", "0000:c1:00.0", 0));
  static const char *const bad[] = {
      "", "\n", "RoCE v3\n", "roce v2\n", "RoCE v2 \x01\n", "RoCE  v2\n",
      "RoCE v2x\n", " RoCE v2\n", "RoCE v2\nRoCE v2\n", "IB\n", "RoCE\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "ports/1/gid_attrs/types/0",
                               bad[i], strlen(bad[i])));
    if (gid_type(f, "n0", 1, 0) != HO_GID_UNKNOWN)
      fail_msg("type \"%s\" was recognised", bad[i]);
  }
  OK(ho_fake_sysfs_write_nic(&f->fs, "n0", "ports/1/gid_attrs/types/0",
                             "RoCE v2\0\n", 9));
  assert_int_equal(gid_type(f, "n0", 1, 0), HO_GID_UNKNOWN);
}

static void test_gid_type_bad_arguments(void **state)
{
  struct fixture *f = *state;
  OK(ho_fake_sysfs_add_nic(&f->fs, "n0", "0000:c1:00.0", 0));
  OK(ho_fake_sysfs_set_gid_type(&f->fs, "n0", 1, 0, "RoCE v2"));
  /* A reachable file that the arguments must not reach. */
  OK(ho_fake_sysfs_write(&f->fs, "sys/class/ports/1/gid_attrs/types/0",
                         "RoCE v2\n", 8));
  assert_int_equal(gid_type(f, "..", 1, 0), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, ".", 1, 0), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, "n0/../n0", 1, 0), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, "", 1, 0), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, NULL, 1, 0), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, "n0", 0, 0), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, "n0", 256, 0), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, "n0", -1, 0), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, "n0", 1, -1), HO_GID_UNKNOWN);
  assert_int_equal(f->topo.ops->gid_type(NULL, "n0", 1, 0), HO_GID_UNKNOWN);
  assert_int_equal(gid_type(f, "n0", 1, 0), HO_GID_ROCE_V2);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init),
      cmocka_unit_test(test_real_sysfs),
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
      T(test_empty_tree),
      T(test_no_class_dir),
      T(test_invalid_arguments),
      T(test_three_nics_sorted),
      T(test_capacity),
      T(test_many_nics),
      T(test_odd_class_entries),
      T(test_bus_id_from_uevent),
      T(test_bus_id_link_not_pci),
      T(test_bus_id_garbage),
      T(test_bus_id_long_uevent),
      T(test_bus_id_link_forms),
      T(test_numa_node),
      T(test_numa_node_huge_and_odd_files),
      T(test_first_active_port),
      T(test_port_names_ignored),
      T(test_port_state_garbage),
      T(test_gid_types),
      T(test_gid_type_infiniband),
      T(test_gid_type_garbage),
      T(test_gid_type_bad_arguments),
      T(test_hw_counter),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
