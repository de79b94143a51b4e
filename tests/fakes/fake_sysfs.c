/* SPDX-License-Identifier: MIT */
#define _XOPEN_SOURCE 700
#include "fakes/fake_sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLASS "sys/class/infiniband"
#define PCI_ROOT "sys/devices/pci0000:00"
#define VIRTUAL "sys/devices/virtual/infiniband"

static int fail(int err)
{
  errno = err;
  return -1;
}

/* snprintf that fails on truncation. */
static int fmt(char *out, size_t cap, const char *f, ...)
    __attribute__((format(printf, 3, 4)));

static int fmt(char *out, size_t cap, const char *f, ...)
{
  va_list ap;
  va_start(ap, f);
  int n = vsnprintf(out, cap, f, ap);
  va_end(ap);
  return (n < 0 || (size_t)n >= cap) ? fail(ENAMETOOLONG) : 0;
}

static int join(char *out, size_t cap, const struct ho_fake_sysfs *fs,
                const char *rel)
{
  if (!fs->root[0] || !rel || rel[0] == '/')
    return fail(EINVAL);
  return fmt(out, cap, "%s/%s", fs->root, rel);
}

/* mkdir -p of an absolute path. */
static int make_dirs(const char *abs)
{
  char p[PATH_MAX];
  size_t len = strlen(abs);
  if (len >= sizeof p)
    return fail(ENAMETOOLONG);
  memcpy(p, abs, len + 1);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
      return -1;
    *s = '/';
  }
  return (mkdir(p, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

static int make_parent(const char *abs)
{
  char p[PATH_MAX];
  size_t len = strlen(abs);
  if (len >= sizeof p)
    return fail(ENAMETOOLONG);
  memcpy(p, abs, len + 1);
  char *slash = strrchr(p, '/');
  if (!slash || slash == p)
    return 0;
  *slash = '\0';
  return make_dirs(p);
}

int ho_fake_sysfs_create(struct ho_fake_sysfs *fs)
{
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0])
    tmp = "/tmp";
  char tmpl[PATH_MAX];
  int n = snprintf(tmpl, sizeof tmpl, "%s/hipobj-sysfs-XXXXXX", tmp);
  if (n < 0 || (size_t)n >= sizeof tmpl)
    return fail(ENAMETOOLONG);
  if (!mkdtemp(tmpl))
    return -1;
  memcpy(fs->root, tmpl, (size_t)n + 1);
  return ho_fake_sysfs_mkdir(fs, CLASS);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
  (void)st;
  (void)ftw;
  if (flag == FTW_DP)
    return rmdir(path) != 0 && errno != ENOENT ? -1 : 0;
  return unlink(path) != 0 && errno != ENOENT ? -1 : 0;
}

static int remove_tree(const char *abs)
{
  struct stat st;
  if (lstat(abs, &st) != 0)
    return errno == ENOENT ? 0 : -1;
  return nftw(abs, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void ho_fake_sysfs_destroy(struct ho_fake_sysfs *fs)
{
  if (!fs || !fs->root[0])
    return;
  remove_tree(fs->root);
  fs->root[0] = '\0';
}

int ho_fake_sysfs_mkdir(struct ho_fake_sysfs *fs, const char *rel)
{
  char abs[PATH_MAX];
  return join(abs, sizeof abs, fs, rel) ? -1 : make_dirs(abs);
}

int ho_fake_sysfs_remove(struct ho_fake_sysfs *fs, const char *rel)
{
  char abs[PATH_MAX];
  return join(abs, sizeof abs, fs, rel) ? -1 : remove_tree(abs);
}

/* Written beside and renamed over the old file, so that a reader sees
 * the old content or the new, as sysfs gives (a counter the test moves
 * while the code reads it). */
int ho_fake_sysfs_write(struct ho_fake_sysfs *fs, const char *rel,
                        const void *data, size_t len)
{
  char abs[PATH_MAX], tmp[PATH_MAX + 32];
  struct stat st;
  if (join(abs, sizeof abs, fs, rel) || make_parent(abs) ||
      (lstat(abs, &st) == 0 && !S_ISREG(st.st_mode) && remove_tree(abs)))
    return -1;
  static atomic_uint seq;
  snprintf(tmp, sizeof tmp, "%s.new.%ld.%u", abs, (long)getpid(),
           atomic_fetch_add(&seq, 1));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  const char *p = data;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      int err = errno;
      close(fd);
      unlink(tmp);
      return fail(err);
    }
    p += w;
    len -= (size_t)w;
  }
  if (close(fd) != 0 || rename(tmp, abs) != 0) {
    int err = errno;
    unlink(tmp);
    return fail(err);
  }
  return 0;
}

int ho_fake_sysfs_symlink(struct ho_fake_sysfs *fs, const char *rel,
                          const char *target)
{
  char abs[PATH_MAX];
  if (join(abs, sizeof abs, fs, rel) || make_parent(abs) ||
      remove_tree(abs))
    return -1;
  return symlink(target, abs);
}

static int write_text(struct ho_fake_sysfs *fs, const char *rel,
                      const char *text)
{
  char buf[512];
  if (fmt(buf, sizeof buf, "%s\n", text))
    return -1;
  return ho_fake_sysfs_write(fs, rel, buf, strlen(buf));
}

static int add_pci_device(struct ho_fake_sysfs *fs, const char *bus_id,
                          int numa_node)
{
  char rel[PATH_MAX];
  char text[256];
  if (fmt(rel, sizeof rel, PCI_ROOT "/%s/uevent", bus_id) ||
      fmt(text, sizeof text,
          "DRIVER=fake\nPCI_CLASS=20000\nPCI_SLOT_NAME=%s\nMODALIAS=pci:x",
          bus_id) ||
      write_text(fs, rel, text))
    return -1;
  if (numa_node == HO_FAKE_NO_NUMA)
    return 0;
  if (fmt(rel, sizeof rel, PCI_ROOT "/%s/numa_node", bus_id) ||
      fmt(text, sizeof text, "%d", numa_node))
    return -1;
  return write_text(fs, rel, text);
}

/* The device's own directory, where the class entry points. */
static int nic_dir(char *out, size_t cap, const char *nic, const char *bus_id)
{
  if (bus_id)
    return fmt(out, cap, PCI_ROOT "/%s/infiniband/%s", bus_id, nic);
  return fmt(out, cap, VIRTUAL "/%s", nic);
}

int ho_fake_sysfs_add_nic(struct ho_fake_sysfs *fs, const char *nic,
                          const char *bus_id, int numa_node)
{
  char dir[PATH_MAX];
  char rel[PATH_MAX];
  char target[PATH_MAX];
  if (!nic || !nic[0] || strchr(nic, '/') ||
      (bus_id && (!bus_id[0] || strchr(bus_id, '/'))))
    return fail(EINVAL);
  if ((bus_id && add_pci_device(fs, bus_id, numa_node)) ||
      nic_dir(dir, sizeof dir, nic, bus_id) || ho_fake_sysfs_mkdir(fs, dir))
    return -1;
  /* sys/class/infiniband/<nic> -> ../../devices/... */
  if (fmt(rel, sizeof rel, CLASS "/%s", nic) ||
      fmt(target, sizeof target, "../../%s", dir + strlen("sys/")) ||
      ho_fake_sysfs_symlink(fs, rel, target))
    return -1;
  if (!bus_id)
    return 0;
  /* <nic>/device -> ../../../<bus> */
  if (fmt(rel, sizeof rel, "%s/device", dir) ||
      fmt(target, sizeof target, "../../../%s", bus_id))
    return -1;
  return ho_fake_sysfs_symlink(fs, rel, target);
}

int ho_fake_sysfs_write_nic(struct ho_fake_sysfs *fs, const char *nic,
                            const char *nic_rel, const void *data, size_t len)
{
  char rel[PATH_MAX];
  if (fmt(rel, sizeof rel, CLASS "/%s/%s", nic, nic_rel))
    return -1;
  return ho_fake_sysfs_write(fs, rel, data, len);
}

static int write_nic_text(struct ho_fake_sysfs *fs, const char *nic,
                          const char *nic_rel, const char *text)
{
  char buf[512];
  if (fmt(buf, sizeof buf, "%s\n", text))
    return -1;
  return ho_fake_sysfs_write_nic(fs, nic, nic_rel, buf, strlen(buf));
}

int ho_fake_sysfs_set_port_state(struct ho_fake_sysfs *fs, const char *nic,
                                 int port, const char *state)
{
  char rel[64];
  if (fmt(rel, sizeof rel, "ports/%d/state", port))
    return -1;
  return write_nic_text(fs, nic, rel, state);
}

int ho_fake_sysfs_set_gid_type(struct ho_fake_sysfs *fs, const char *nic,
                               int port, int index, const char *type)
{
  char rel[96];
  if (fmt(rel, sizeof rel, "ports/%d/gid_attrs/types/%d", port, index))
    return -1;
  return write_nic_text(fs, nic, rel, type);
}

int ho_fake_sysfs_set_link_layer(struct ho_fake_sysfs *fs, const char *nic,
                                 int port, const char *layer)
{
  char rel[64];
  if (fmt(rel, sizeof rel, "ports/%d/link_layer", port))
    return -1;
  return write_nic_text(fs, nic, rel, layer);
}

/* The last component of a path. */
static const char *base_name(const char *path)
{
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

int ho_fake_sysfs_add_pci(struct ho_fake_sysfs *fs, const char *path,
                          unsigned vendor, unsigned pci_class, int numa_node)
{
  char rel[PATH_MAX];
  char text[64];
  char target[PATH_MAX];
  if (!path || !strchr(path, '/') || path[0] == '/')
    return fail(EINVAL);
  if (fmt(rel, sizeof rel, "sys/devices/%s", path) ||
      ho_fake_sysfs_mkdir(fs, rel))
    return -1;
  if (fmt(rel, sizeof rel, "sys/devices/%s/vendor", path) ||
      fmt(text, sizeof text, "0x%04x", vendor) || write_text(fs, rel, text) ||
      fmt(rel, sizeof rel, "sys/devices/%s/class", path) ||
      fmt(text, sizeof text, "0x%06x", pci_class) ||
      write_text(fs, rel, text))
    return -1;
  if (numa_node != HO_FAKE_NO_NUMA &&
      (fmt(rel, sizeof rel, "sys/devices/%s/numa_node", path) ||
       fmt(text, sizeof text, "%d", numa_node) || write_text(fs, rel, text)))
    return -1;
  if (fmt(rel, sizeof rel, "sys/devices/%s/uevent", path) ||
      fmt(text, sizeof text, "PCI_SLOT_NAME=%s", base_name(path)) ||
      write_text(fs, rel, text))
    return -1;
  /* sys/bus/pci/devices/<bus> -> ../../../devices/<path> */
  if (fmt(rel, sizeof rel, "sys/bus/pci/devices/%s", base_name(path)) ||
      fmt(target, sizeof target, "../../../devices/%s", path))
    return -1;
  return ho_fake_sysfs_symlink(fs, rel, target);
}

int ho_fake_sysfs_add_nic_at(struct ho_fake_sysfs *fs, const char *nic,
                             const char *path, int numa_node,
                             const char *rate)
{
  char dir[PATH_MAX];
  char rel[PATH_MAX];
  char target[PATH_MAX];
  if (!nic || !nic[0] || strchr(nic, '/'))
    return fail(EINVAL);
  if (ho_fake_sysfs_add_pci(fs, path, 0x15b3, 0x020000, numa_node) ||
      fmt(dir, sizeof dir, "sys/devices/%s/infiniband/%s", path, nic) ||
      ho_fake_sysfs_mkdir(fs, dir))
    return -1;
  if (fmt(rel, sizeof rel, CLASS "/%s", nic) ||
      fmt(target, sizeof target, "../../%s", dir + strlen("sys/")) ||
      ho_fake_sysfs_symlink(fs, rel, target))
    return -1;
  if (fmt(rel, sizeof rel, "%s/device", dir) ||
      fmt(target, sizeof target, "../../../%s", base_name(path)) ||
      ho_fake_sysfs_symlink(fs, rel, target))
    return -1;
  if (ho_fake_sysfs_set_port_state(fs, nic, 1, "4: ACTIVE"))
    return -1;
  return rate ? write_nic_text(fs, nic, "ports/1/rate", rate) : 0;
}

int ho_fake_sysfs_set_node_cpus(struct ho_fake_sysfs *fs, int node,
                                const char *cpulist)
{
  char rel[PATH_MAX];
  if (fmt(rel, sizeof rel, "sys/devices/system/node/node%d/cpulist", node))
    return -1;
  return write_text(fs, rel, cpulist);
}
