/* SPDX-License-Identifier: MIT */
/* The NIC topology from sysfs, below a root directory:
 *
 *   <root>/sys/class/infiniband/<dev>/device           -> the PCI device
 *   <root>/sys/class/infiniband/<dev>/device/numa_node  "0\n", "-1\n"
 *   <root>/sys/class/infiniband/<dev>/device/uevent     PCI_SLOT_NAME=...
 *   <root>/sys/class/infiniband/<dev>/ports/<n>/state   "4: ACTIVE\n"
 *   <root>/sys/class/infiniband/<dev>/ports/<n>/link_layer
 *   <root>/sys/class/infiniband/<dev>/ports/<n>/gid_attrs/types/<i>
 *   <root>/sys/class/infiniband/<dev>/ports/<n>/rate    "400 Gb/sec (4X NDR)"
 *   <root>/sys/bus/pci/devices/<bus id>  -> ../../../devices/pci.../<bus id>
 *   <root>/sys/bus/pci/devices/<bus id>/{class,vendor,numa_node}
 *   <root>/sys/devices/system/node/node<N>/cpulist     "0-15,32-47"
 *   <root>/proc/self/limits      "Max locked memory  8388608  8388608  bytes"
 *   <root>/proc/self/status      "VmPin:  0 kB", "CapEff:  000001ffffffffff"
 *
 * A device's place in the PCI tree is the path of its directory below
 * <root>/sys/devices, links resolved. Every file is read with a size limit, only if it is a regular file, and
 * never trusted: anything that does not parse counts as unknown. */
#define _GNU_SOURCE /* sched_getcpu */
#include "platform/topology.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hex.h"

#define CLASS_DIR "/sys/class/infiniband"
#define ATTR_MAX 64    /* state, numa_node, link_layer, GID type */
#define UEVENT_MAX 4096
#define PROC_MAX 16384 /* /proc/self/status and limits */
#define CPULIST_MAX 4096
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

/* ---- the PCI tree ------------------------------------------------------- */

/* "pci0000:00" or "pci10000:00": a host bridge as sysfs names it. */
static bool is_host_bridge(const char *s, size_t len)
{
  if (len < 9 || strncmp(s, "pci", 3) != 0)
    return false;
  char buf[HO_BUS_ID_MAX];
  if (len >= sizeof buf)
    return false;
  memcpy(buf, s + 3, len - 3);
  buf[len - 3] = '\0';
  const char *p = buf;
  return hex_run(&p, 4, 8) && *p++ == ':' && hex_run(&p, 2, 2) && !*p;
}

/* The path of the device that `link` resolves to, below <root>/sys/devices:
 * a host bridge, then PCI bus ids only. "" (false) otherwise. */
static bool pci_path_of(const struct ho_topology *t, const char *link,
                        char out[HO_PCI_PATH_MAX])
{
  char devices[PATH_MAX];
  char dev_real[PATH_MAX];
  char real[PATH_MAX];
  out[0] = '\0';
  int n = snprintf(devices, sizeof devices, "%s/sys/devices", t->root);
  if (n < 0 || (size_t)n >= sizeof devices || !realpath(devices, dev_real) ||
      !realpath(link, real))
    return false;
  size_t plen = strlen(dev_real);
  if (strncmp(real, dev_real, plen) != 0 || real[plen] != '/')
    return false;
  const char *rel = real + plen + 1;
  if (strlen(rel) >= HO_PCI_PATH_MAX)
    return false;
  const char *slash = strchr(rel, '/');
  if (!slash || !is_host_bridge(rel, (size_t)(slash - rel)))
    return false;
  for (const char *c = slash + 1; *c;) {
    const char *end = strchr(c, '/');
    size_t len = end ? (size_t)(end - c) : strlen(c);
    char comp[HO_BUS_ID_MAX];
    if (len == 0 || len >= sizeof comp)
      return false;
    memcpy(comp, c, len);
    comp[len] = '\0';
    if (!is_pci_bus_id(comp))
      return false;
    c += len + (end ? 1 : 0);
  }
  memcpy(out, rel, strlen(rel) + 1);
  return true;
}

/* "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)": in Mbit/s, 0 unknown. */
static unsigned parse_rate(const char *s)
{
  unsigned long long mbps = 0;
  int digits = 0;
  for (; *s >= '0' && *s <= '9' && digits < 7; s++, digits++)
    mbps = mbps * 10 + (unsigned)(*s - '0');
  if (digits == 0)
    return 0;
  mbps *= 1000;
  if (*s == '.') {
    unsigned scale = 100;
    for (s++; *s >= '0' && *s <= '9'; s++) {
      mbps += (unsigned)(*s - '0') * scale;
      scale /= 10;
    }
  }
  return strncmp(s, " Gb/sec", 7) == 0 && mbps <= 0xffffffffull
             ? (unsigned)mbps
             : 0;
}

static unsigned read_rate(const struct ho_topology *t, const char *nic,
                          int port)
{
  char path[PATH_MAX];
  char buf[ATTR_MAX];
  if (port < 1 ||
      !class_path(t, path, sizeof path, "/%s/ports/%d/rate", nic, port) ||
      !read_attr(path, buf))
    return 0;
  return parse_rate(buf);
}

static void read_nic(const struct ho_topology *t, const char *name,
                     struct ho_nic_info *out)
{
  char path[PATH_MAX];
  memset(out, 0, sizeof *out);
  memcpy(out->name, name, strlen(name) + 1);
  read_bus_id(t, name, out->bus_id);
  out->numa_node = read_numa_node(t, name);
  out->active_port = first_active_port(t, name);
  if (out->bus_id[0] && class_path(t, path, sizeof path, "/%s/device", name))
    pci_path_of(t, path, out->pci_path);
  out->rate_mbps = read_rate(t, name, out->active_port);
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

/* ---- PCI devices and GPUs ----------------------------------------------- */

/* <root>/sys/bus/pci/devices/<bus id>[/attr] */
static bool pci_dev_path(const struct ho_topology *t, char *out, size_t cap,
                         const char *bus_id, const char *attr)
{
  int n = snprintf(out, cap, "%s/sys/bus/pci/devices/%s%s%s", t->root, bus_id,
                   attr ? "/" : "", attr ? attr : "");
  return n >= 0 && (size_t)n < cap;
}

static int pci_numa_node(const struct ho_topology *t, const char *bus_id)
{
  char path[PATH_MAX];
  char buf[ATTR_MAX];
  long v;
  if (pci_dev_path(t, path, sizeof path, bus_id, "numa_node") &&
      read_attr(path, buf) && parse_int(buf, -1, 65535, &v))
    return (int)v;
  return -1;
}

static hipObjOpError_t pci_device(const struct ho_topology *t,
                                  const char *bus_id, struct ho_pci_info *out)
{
  char path[PATH_MAX];
  struct stat st;
  if (!t || !bus_id || !out)
    return hipObjInvalidValue;
  if (!is_pci_bus_id(bus_id) ||
      !pci_dev_path(t, path, sizeof path, bus_id, NULL) ||
      stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
    return hipObjNicNotFound;
  struct ho_pci_info r;
  memset(&r, 0, sizeof r);
  memcpy(r.bus_id, bus_id, strlen(bus_id) + 1);
  pci_path_of(t, path, r.pci_path);
  r.numa_node = pci_numa_node(t, bus_id);
  *out = r;
  return hipObjSuccess;
}

/* "0x030200": strict hex after 0x, at most 8 digits. */
static bool read_hex_attr(const struct ho_topology *t, const char *bus_id,
                          const char *attr, unsigned long *out)
{
  char path[PATH_MAX];
  char buf[ATTR_MAX];
  if (!pci_dev_path(t, path, sizeof path, bus_id, attr) ||
      !read_attr(path, buf) || buf[0] != '0' || buf[1] != 'x')
    return false;
  unsigned long v = 0;
  size_t n = 0;
  for (const char *p = buf + 2; *p; p++, n++) {
    int d = ho_hex_digit(*p);
    if (d < 0 || n >= 8)
      return false;
    v = v * 16 + (unsigned long)d;
  }
  *out = v;
  return n > 0;
}

#define PCI_VENDOR_AMD 0x1002ul
#define PCI_VENDOR_NVIDIA 0x10deul
#define PCI_BASE_DISPLAY 0x03ul     /* VGA, 3D controller (NVIDIA) */
#define PCI_BASE_ACCELERATOR 0x12ul /* processing accelerator (Instinct) */

static bool is_gpu(const struct ho_topology *t, const char *bus_id)
{
  unsigned long vendor, cls;
  if (!read_hex_attr(t, bus_id, "vendor", &vendor) ||
      !read_hex_attr(t, bus_id, "class", &cls))
    return false;
  unsigned long base = (cls >> 16) & 0xff;
  return (vendor == PCI_VENDOR_AMD || vendor == PCI_VENDOR_NVIDIA) &&
         (base == PCI_BASE_DISPLAY || base == PCI_BASE_ACCELERATOR);
}

static hipObjOpError_t list_gpus(const struct ho_topology *t,
                                 struct ho_pci_info *out, size_t cap,
                                 size_t *count)
{
  if (!t || !count || (!out && cap))
    return hipObjInvalidValue;
  char path[PATH_MAX];
  int n = snprintf(path, sizeof path, "%s/sys/bus/pci/devices", t->root);
  if (n < 0 || (size_t)n >= sizeof path)
    return hipObjInvalidValue;
  *count = 0;
  DIR *d = opendir(path);
  if (!d)
    return hipObjSuccess; /* no PCI bus listed: no GPU found */
  char names[HO_MAX_GPUS][HO_NIC_NAME_MAX];
  struct name_set set = {names, 0, cap < HO_MAX_GPUS ? cap : HO_MAX_GPUS};
  struct dirent *e;
  while (set.cap && (e = readdir(d)))
    if (is_pci_bus_id(e->d_name) && is_gpu(t, e->d_name))
      name_set_add(&set, e->d_name);
  closedir(d);
  size_t got = 0;
  for (size_t i = 0; i < set.count; i++)
    if (pci_device(t, names[i], &out[got]) == hipObjSuccess)
      got++;
  *count = got;
  return hipObjSuccess;
}

/* ---- the calling CPU's NUMA node ----------------------------------------- */

/* Whether cpu is in a cpulist ("0-15,32-47\n"). */
static bool cpulist_has(const char *s, long cpu)
{
  while (*s && *s != '\n') {
    long lo = 0, hi;
    int digits = 0;
    for (; *s >= '0' && *s <= '9' && digits < 9; s++, digits++)
      lo = lo * 10 + (*s - '0');
    if (!digits)
      return false;
    hi = lo;
    if (*s == '-') {
      hi = 0;
      digits = 0;
      for (s++; *s >= '0' && *s <= '9' && digits < 9; s++, digits++)
        hi = hi * 10 + (*s - '0');
      if (!digits)
        return false;
    }
    if (cpu >= lo && cpu <= hi)
      return true;
    if (*s == ',')
      s++;
    else if (*s && *s != '\n')
      return false;
  }
  return false;
}

static int cpu_numa_node(const struct ho_topology *t)
{
  int cpu = t ? sched_getcpu() : -1;
  if (cpu < 0)
    return -1;
  char path[PATH_MAX];
  int n = snprintf(path, sizeof path, "%s/sys/devices/system/node", t->root);
  if (n < 0 || (size_t)n >= sizeof path)
    return -1;
  DIR *d = opendir(path);
  if (!d)
    return -1;
  int node = -1;
  struct dirent *e;
  while (node < 0 && (e = readdir(d))) {
    long v;
    char file[PATH_MAX];
    char buf[CPULIST_MAX];
    if (strncmp(e->d_name, "node", 4) != 0 ||
        (e->d_name[4] == '0' && e->d_name[5]) ||
        !parse_int(e->d_name + 4, 0, 65535, &v))
      continue;
    n = snprintf(file, sizeof file, "%s/%s/cpulist", path, e->d_name);
    if (n > 0 && (size_t)n < sizeof file &&
        read_small(file, buf, sizeof buf, false) >= 0 && cpulist_has(buf, cpu))
      node = (int)v;
  }
  closedir(d);
  return node;
}

/* ---- what the process may pin ------------------------------------------- */

/* The value after `key` on its line of a /proc file, blanks skipped. */
static const char *proc_field(const char *buf, const char *key)
{
  size_t klen = strlen(key);
  for (const char *line = buf; *line;) {
    if (strncmp(line, key, klen) == 0) {
      const char *v = line + klen;
      while (*v == ' ' || *v == '\t')
        v++;
      return v;
    }
    const char *nl = strchr(line, '\n');
    if (!nl)
      break;
    line = nl + 1;
  }
  return NULL;
}

static bool parse_ull(const char **s, unsigned long long *out)
{
  unsigned long long v = 0;
  const char *p = *s;
  if (*p < '0' || *p > '9')
    return false;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (~0ull - 9) / 10)
      return false;
    v = v * 10 + (unsigned)(*p - '0');
  }
  *s = p;
  *out = v;
  return true;
}

#define CAP_IPC_LOCK_BIT 14

static hipObjOpError_t pin_limits(const struct ho_topology *t,
                                  struct ho_pin_limits *out)
{
  if (!t || !out)
    return hipObjInvalidValue;
  char path[PATH_MAX];
  char buf[PROC_MAX];
  struct ho_pin_limits r = {0, 0, 0};
  int n = snprintf(path, sizeof path, "%s/proc/self/limits", t->root);
  if (n < 0 || (size_t)n >= sizeof path ||
      read_small(path, buf, sizeof buf, true) < 0)
    return hipObjNotSupported;
  const char *v = proc_field(buf, "Max locked memory");
  if (!v)
    return hipObjNotSupported;
  if (strncmp(v, "unlimited", 9) == 0)
    r.limit = ~0ull;
  else if (!parse_ull(&v, &r.limit))
    return hipObjNotSupported;
  n = snprintf(path, sizeof path, "%s/proc/self/status", t->root);
  if (n > 0 && (size_t)n < sizeof path &&
      read_small(path, buf, sizeof buf, true) >= 0) {
    unsigned long long kb;
    v = proc_field(buf, "VmPin:");
    if (v && parse_ull(&v, &kb) && kb <= ~0ull / 1024)
      r.pinned = kb * 1024;
    v = proc_field(buf, "CapEff:");
    unsigned long long caps = 0;
    size_t digits = 0;
    for (; v && ho_hex_digit(*v) >= 0 && digits < 16; v++, digits++)
      caps = caps * 16 + (unsigned)ho_hex_digit(*v);
    r.ipc_lock = digits > 0 && ((caps >> CAP_IPC_LOCK_BIT) & 1);
  }
  *out = r;
  return hipObjSuccess;
}

/* ---- hardware counters -------------------------------------------------- */

static hipObjOpError_t hw_counter(const struct ho_topology *t, const char *nic,
                                  int port, const char *name,
                                  unsigned long long *out)
{
  char path[PATH_MAX];
  char buf[ATTR_MAX];
  if (!t || !out || !nic || !name || !is_plain_name(nic, HO_NIC_NAME_MAX) ||
      !is_plain_name(name, NAME_MAX) || port < 1 || port > PORT_MAX)
    return hipObjInvalidValue;
  const char *v = buf;
  unsigned long long n;
  if (!class_path(t, path, sizeof path, "/%s/ports/%d/hw_counters/%s", nic,
                  port, name) ||
      !read_attr(path, buf) || !parse_ull(&v, &n) || *v)
    return hipObjNotSupported;
  *out = n;
  return hipObjSuccess;
}

const struct ho_topology_ops ho_topology_sysfs_ops = {
    list_nics,
    gid_type,
    pci_device,
    list_gpus,
    cpu_numa_node,
    pin_limits,
    hw_counter,
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
