/* SPDX-License-Identifier: MIT */
/* The NIC topology from sysfs, below a root directory:
 *
 *   <root>/sys/class/infiniband/<dev>/device           -> the PCI device
 *   <root>/sys/class/infiniband/<dev>/device/numa_node  "0\n", "-1\n"
 *   <root>/sys/class/infiniband/<dev>/device/uevent     PCI_SLOT_NAME=...
 *   <root>/sys/class/infiniband/<dev>/ports/<n>/state   "4: ACTIVE\n"
 *   <root>/sys/class/infiniband/<dev>/ports/<n>/link_layer
 *   <root>/sys/class/infiniband/<dev>/ports/<n>/gid_attrs/types/<i>
 *
 * Every file is read with a size limit, only if it is a regular file, and
 * never trusted: anything that does not parse counts as unknown. */
#include "platform/topology.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hex.h"

#define CLASS_DIR "/sys/class/infiniband"
#define ATTR_MAX 64    /* state, numa_node, link_layer, GID type */
#define UEVENT_MAX 4096
#define PORT_MAX 255   /* verbs port numbers are uint8_t, from 1 */
#define GID_INDEX_MAX 65535

/* ---- small readers ---------------------------------------------------- */

/* Reads at most cap - 1 bytes of a regular file into buf, NUL-terminated.
 * Returns the length, or -1 if the file cannot be read, is not a regular
 * file, holds a NUL byte, or (with !allow_cut) is longer than that. */
static ssize_t read_small(const char *path, char *buf, size_t cap,
                          bool allow_cut)
{
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return -1;
  struct stat st;
  ssize_t len = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    size_t got = 0;
    ssize_t r = 0;
    while (got < cap - 1) {
      r = read(fd, buf + got, cap - 1 - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      got += (size_t)r;
    }
    char extra;
    bool cut = got == cap - 1 && read(fd, &extra, 1) > 0;
    if (r >= 0 && (allow_cut || !cut) && !memchr(buf, '\0', got)) {
      buf[got] = '\0';
      len = (ssize_t)got;
    }
  }
  close(fd);
  return len;
}

/* A one-line attribute without its trailing newline. */
static bool read_attr(const char *path, char buf[ATTR_MAX])
{
  ssize_t n = read_small(path, buf, ATTR_MAX, false);
  if (n < 0)
    return false;
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
    buf[--n] = '\0';
  return !strchr(buf, '\n');
}

/* Strict decimal in [min, max], with an optional '-'. */
static bool parse_int(const char *s, long min, long max, long *out)
{
  bool neg = *s == '-';
  if (neg)
    s++;
  if (!*s)
    return false;
  long limit = neg ? -min : max; /* min and max are small */
  long v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9')
      return false;
    v = v * 10 + (*s - '0');
    if (v > limit)
      return false;
  }
  v = neg ? -v : v;
  if (v < min || v > max)
    return false;
  *out = v;
  return true;
}

static bool hex_run(const char **s, size_t min, size_t max)
{
  size_t n = 0;
  while (ho_hex_digit((*s)[n]) >= 0)
    n++;
  *s += n;
  return n >= min && n <= max;
}

/* DDDD:BB:SS.F (domain 4 to 8 hex digits), as sysfs names PCI devices. */
static bool is_pci_bus_id(const char *s)
{
  if (strlen(s) >= HO_BUS_ID_MAX)
    return false;
  return hex_run(&s, 4, 8) && *s++ == ':' && hex_run(&s, 2, 2) &&
         *s++ == ':' && hex_run(&s, 2, 2) && *s++ == '.' && *s >= '0' &&
         *s <= '7' && s[1] == '\0';
}

/* A device or port name from a directory entry or a caller: no path
 * separators, no dot names, short enough. */
static bool is_plain_name(const char *s, size_t max)
{
  size_t n = strnlen(s, max);
  return n > 0 && n < max && !strchr(s, '/') && strcmp(s, ".") != 0 &&
         strcmp(s, "..") != 0;
}

/* ---- paths -------------------------------------------------------------- */

/* <root>/sys/class/infiniband followed by the formatted tail. */
static bool class_path(const struct ho_topology *t, char *out, size_t cap,
                       const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool class_path(const struct ho_topology *t, char *out, size_t cap,
                       const char *fmt, ...)
{
  int n = snprintf(out, cap, "%s" CLASS_DIR, t->root);
  if (n < 0 || (size_t)n >= cap)
    return false;
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(out + n, cap - (size_t)n, fmt, ap);
  va_end(ap);
  return m >= 0 && (size_t)m < cap - (size_t)n;
}

/* ---- per-NIC attributes ------------------------------------------------- */

static bool bus_id_from_link(const char *dev_path, char out[HO_BUS_ID_MAX])
{
  char target[PATH_MAX];
  ssize_t n = readlink(dev_path, target, sizeof target - 1);
  if (n <= 0)
    return false;
  target[n] = '\0';
  while (n > 1 && target[n - 1] == '/')
    target[--n] = '\0';
  const char *base = strrchr(target, '/');
  base = base ? base + 1 : target;
  if (!is_pci_bus_id(base))
    return false;
  memcpy(out, base, strlen(base) + 1);
  return true;
}

/* PCI_SLOT_NAME=<bus id> on a complete line of device/uevent. */
static bool bus_id_from_uevent(const char *uevent_path,
                               char out[HO_BUS_ID_MAX])
{
  static const char key[] = "PCI_SLOT_NAME=";
  char buf[UEVENT_MAX];
  ssize_t n = read_small(uevent_path, buf, sizeof buf, true);
  if (n < 0)
    return false;
  bool cut = (size_t)n == sizeof buf - 1;
  for (char *line = buf; *line;) {
    char *nl = strchr(line, '\n');
    if (!nl && cut)
      break; /* the last line may be incomplete */
    if (nl)
      *nl = '\0';
    if (strncmp(line, key, sizeof key - 1) == 0) {
      const char *v = line + sizeof key - 1;
      if (!is_pci_bus_id(v))
        return false;
      memcpy(out, v, strlen(v) + 1);
      return true;
    }
    if (!nl)
      break;
    line = nl + 1;
  }
  return false;
}

static void read_bus_id(const struct ho_topology *t, const char *nic,
                        char out[HO_BUS_ID_MAX])
{
  char path[PATH_MAX];
  out[0] = '\0';
  if (class_path(t, path, sizeof path, "/%s/device", nic) &&
      bus_id_from_link(path, out))
    return;
  if (class_path(t, path, sizeof path, "/%s/device/uevent", nic) &&
      bus_id_from_uevent(path, out))
    return;
  out[0] = '\0';
}

static int read_numa_node(const struct ho_topology *t, const char *nic)
{
  char path[PATH_MAX];
  char buf[ATTR_MAX];
  long v;
  if (class_path(t, path, sizeof path, "/%s/device/numa_node", nic) &&
      read_attr(path, buf) && parse_int(buf, -1, 65535, &v))
    return (int)v;
  return -1;
}

/* "4: ACTIVE": the number is the kernel's enum ib_port_state. */
static bool port_is_active(const struct ho_topology *t, const char *nic,
                           long port)
{
  char path[PATH_MAX];
  char buf[ATTR_MAX];
  if (!class_path(t, path, sizeof path, "/%s/ports/%ld/state", nic, port) ||
      !read_attr(path, buf))
    return false;
  char *colon = strchr(buf, ':');
  long state;
  if (!colon)
    return false;
  *colon = '\0';
  return parse_int(buf, 0, 255, &state) && state == 4;
}

/* The lowest-numbered ACTIVE port, 0 when none. */
static int first_active_port(const struct ho_topology *t, const char *nic)
{
  char path[PATH_MAX];
  if (!class_path(t, path, sizeof path, "/%s/ports", nic))
    return 0;
  DIR *d = opendir(path);
  if (!d)
    return 0;
  long best = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    long port;
    if (e->d_name[0] == '0' || !parse_int(e->d_name, 1, PORT_MAX, &port))
      continue;
    if ((best == 0 || port < best) && port_is_active(t, nic, port))
      best = port;
  }
  closedir(d);
  return (int)best;
}

static void read_nic(const struct ho_topology *t, const char *name,
                     struct ho_nic_info *out)
{
  memset(out, 0, sizeof *out);
  memcpy(out->name, name, strlen(name) + 1);
  read_bus_id(t, name, out->bus_id);
  out->numa_node = read_numa_node(t, name);
  out->active_port = first_active_port(t, name);
}

/* ---- listing ------------------------------------------------------------ */

struct name_set {
  char (*names)[HO_NIC_NAME_MAX];
  size_t count;
  size_t cap;
};

/* Keeps the cap smallest names, sorted (strcmp order). */
static void name_set_add(struct name_set *s, const char *name)
{
  size_t pos = s->count;
  while (pos > 0 && strcmp(s->names[pos - 1], name) > 0)
    pos--;
  if (pos >= s->cap)
    return;
  size_t last = s->count < s->cap ? s->count : s->cap - 1;
  memmove(s->names[pos + 1], s->names[pos], (last - pos) * HO_NIC_NAME_MAX);
  memcpy(s->names[pos], name, strlen(name) + 1);
  if (s->count < s->cap)
    s->count++;
}

static bool is_nic_dir(const struct ho_topology *t, const char *name)
{
  char path[PATH_MAX];
  struct stat st;
  return is_plain_name(name, HO_NIC_NAME_MAX) && name[0] != '.' &&
         class_path(t, path, sizeof path, "/%s", name) &&
         stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static hipObjOpError_t list_nics(const struct ho_topology *t,
                                 struct ho_nic_info *out, size_t cap,
                                 size_t *count)
{
  if (!t || !count || (!out && cap))
    return hipObjInvalidValue;
  char path[PATH_MAX];
  int n = snprintf(path, sizeof path, "%s" CLASS_DIR, t->root);
  if (n < 0 || (size_t)n >= sizeof path)
    return hipObjInvalidValue;
  DIR *d = opendir(path);
  if (!d) {
    if (errno != ENOENT && errno != ENOTDIR)
      return hipObjNicNotFound;
    *count = 0; /* no RDMA devices on this host */
    return hipObjSuccess;
  }
  char names[HO_MAX_NICS][HO_NIC_NAME_MAX];
  struct name_set set = {names, 0, cap < HO_MAX_NICS ? cap : HO_MAX_NICS};
  struct dirent *e;
  while (set.cap && (e = readdir(d)))
    if (is_nic_dir(t, e->d_name))
      name_set_add(&set, e->d_name);
  closedir(d);
  for (size_t i = 0; i < set.count; i++)
    read_nic(t, names[i], &out[i]);
  *count = set.count;
  return hipObjSuccess;
}

/* ---- GID types ---------------------------------------------------------- */

static bool port_is_infiniband(const struct ho_topology *t, const char *nic,
                               long port)
{
  char path[PATH_MAX];
  char buf[ATTR_MAX];
  return class_path(t, path, sizeof path, "/%s/ports/%ld/link_layer", nic,
                    port) &&
         read_attr(path, buf) && strcmp(buf, "InfiniBand") == 0;
}

/* The kernel writes "RoCE v2" or "IB/RoCE v1"; the latter is an IB GID on
 * a port whose link layer is InfiniBand, and RoCE v1 otherwise. */
static enum ho_gid_type gid_type(const struct ho_topology *t, const char *nic,
                                 int port, int index)
{
  if (!t || !nic || !is_plain_name(nic, HO_NIC_NAME_MAX) || port < 1 ||
      port > PORT_MAX || index < 0 || index > GID_INDEX_MAX)
    return HO_GID_UNKNOWN;
  char path[PATH_MAX];
  char buf[ATTR_MAX];
  if (!class_path(t, path, sizeof path, "/%s/ports/%d/gid_attrs/types/%d",
                  nic, port, index) ||
      !read_attr(path, buf))
    return HO_GID_UNKNOWN;
  if (strcmp(buf, "RoCE v2") == 0)
    return HO_GID_ROCE_V2;
  if (strcmp(buf, "IB/RoCE v1") == 0)
    return port_is_infiniband(t, nic, port) ? HO_GID_IB : HO_GID_ROCE_V1;
  return HO_GID_UNKNOWN;
}

const struct ho_topology_ops ho_topology_sysfs_ops = {
    list_nics,
    gid_type,
};

hipObjOpError_t ho_topology_sysfs_init(struct ho_topology *t,
                                       const char *root)
{
  if (!t)
    return hipObjInvalidValue;
  size_t len = root ? strnlen(root, PATH_MAX) : 0;
  while (len > 0 && root[len - 1] == '/')
    len--; /* "/" and "" both mean the real root */
  /* Leave room below the root for the longest path built under it. */
  if (len >= PATH_MAX - 256)
    return hipObjInvalidValue;
  t->ops = &ho_topology_sysfs_ops;
  memcpy(t->root, root ? root : "", len);
  t->root[len] = '\0';
  return hipObjSuccess;
}
