/* SPDX-License-Identifier: MIT */
/* RDMA devices as sysfs describes them, for `hipobj info` and for picking a
 * NIC on a host without a GPU. HIPOBJ_SYSFS_ROOT (tests) puts the tree
 * below another directory. */
#include "sysfs.h"
#include "tool.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLASS "/sys/class/infiniband"

static void class_path(char *out, size_t cap, const char *fmt1,
                       const char *a, const char *b)
{
  const char *root = getenv("HIPOBJ_SYSFS_ROOT");
  char tail[512];
  snprintf(tail, sizeof tail, fmt1, a ? a : "", b ? b : "");
  snprintf(out, cap, "%s%s%s", root ? root : "", CLASS, tail);
}

const char *tool_sysfs_class_dir(char *out, size_t cap)
{
  class_path(out, cap, "%s%s", NULL, NULL);
  return out;
}

/* The first line of a file, without its newline; false if unreadable. */
static bool read_line(const char *path, char *out, size_t cap)
{
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  bool ok = fgets(out, (int)cap, f) != NULL;
  fclose(f);
  if (ok)
    out[strcspn(out, "\r\n")] = '\0';
  return ok;
}

static int by_name(const void *a, const void *b)
{
  return strcmp(((const struct tool_nic *)a)->name,
                ((const struct tool_nic *)b)->name);
}

/* "fe80:0000:...:0001" -> 16 bytes. */
static bool parse_gid(const char *s, uint8_t raw[16])
{
  unsigned v[8];
  if (sscanf(s, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x", &v[0], &v[1], &v[2],
             &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
    return false;
  for (int i = 0; i < 8; i++) {
    raw[2 * i] = (uint8_t)(v[i] >> 8);
    raw[2 * i + 1] = (uint8_t)v[i];
  }
  return true;
}

static bool zero_gid(const uint8_t raw[16])
{
  for (int i = 0; i < 16; i++)
    if (raw[i])
      return false;
  return true;
}

static void read_gids(const char *port_dir, struct tool_port *p)
{
  char path[768], line[128];
  for (int i = 0; i < 256 && p->n_gids < TOOL_MAX_GIDS; i++) {
    struct tool_gid *g = &p->gids[p->n_gids];
    snprintf(path, sizeof path, "%s/gids/%d", port_dir, i);
    if (!read_line(path, line, sizeof line))
      break;
    if (!parse_gid(line, g->raw) || zero_gid(g->raw))
      continue;
    g->index = i;
    snprintf(path, sizeof path, "%s/gid_attrs/types/%d", port_dir, i);
    if (!read_line(path, g->type, sizeof g->type))
      snprintf(g->type, sizeof g->type, "?");
    snprintf(path, sizeof path, "%s/gid_attrs/ndevs/%d", port_dir, i);
    if (!read_line(path, g->ndev, sizeof g->ndev))
      g->ndev[0] = '\0';
    p->n_gids++;
  }
}

static void read_ports(const char *dev, struct tool_nic *n)
{
  char dir[512], path[768];
  for (int port = 1; port <= TOOL_MAX_PORTS && n->n_ports < TOOL_MAX_PORTS;
       port++) {
    struct tool_port *p = &n->ports[n->n_ports];
    char num[16];
    snprintf(num, sizeof num, "%d", port);
    class_path(dir, sizeof dir, "/%s/ports/%s", dev, num);
    snprintf(path, sizeof path, "%s/state", dir);
    if (!read_line(path, p->state, sizeof p->state))
      continue;
    p->num = port;
    snprintf(path, sizeof path, "%s/link_layer", dir);
    if (!read_line(path, p->link_layer, sizeof p->link_layer))
      p->link_layer[0] = '\0';
    read_gids(dir, p);
    n->n_ports++;
  }
}

static void read_nic(const char *name, struct tool_nic *n)
{
  char path[512], target[512];
  memset(n, 0, sizeof *n);
  snprintf(n->name, sizeof n->name, "%s", name);
  class_path(path, sizeof path, "/%s/device%s", name, NULL);
  ssize_t len = readlink(path, target, sizeof target - 1);
  if (len > 0) {
    target[len] = '\0';
    const char *slash = strrchr(target, '/');
    snprintf(n->bus, sizeof n->bus, "%.*s", (int)sizeof n->bus - 1,
             slash ? slash + 1 : target);
  }
  class_path(path, sizeof path, "/%s/device/numa_node%s", name, NULL);
  char line[32];
  n->numa = read_line(path, line, sizeof line) ? (int)strtol(line, NULL, 10)
                                                : -1;
  read_ports(name, n);
}

int tool_sysfs_nics(struct tool_nic *out, int cap)
{
  char dir[512];
  DIR *d = opendir(tool_sysfs_class_dir(dir, sizeof dir));
  if (!d)
    return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < cap) {
    if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof out->name)
      continue;
    read_nic(e->d_name, &out[n++]);
  }
  closedir(d);
  qsort(out, (size_t)n, sizeof *out, by_name);
  return n;
}

bool tool_port_active(const struct tool_port *p)
{
  return strstr(p->state, "ACTIVE") != NULL;
}

bool tool_first_active_nic(char *out, size_t cap)
{
  struct tool_nic *nics = calloc(TOOL_MAX_NICS, sizeof *nics);
  bool found = false;
  int n = nics ? tool_sysfs_nics(nics, TOOL_MAX_NICS) : 0;
  for (int i = 0; i < n && !found; i++)
    for (int p = 0; p < nics[i].n_ports && !found; p++)
      if (tool_port_active(&nics[i].ports[p])) {
        snprintf(out, cap, "%s", nics[i].name);
        found = true;
      }
  free(nics);
  return found;
}

void tool_gid_text(const uint8_t raw[16], char *out, size_t cap)
{
  static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (memcmp(raw, v4, sizeof v4) == 0) {
    snprintf(out, cap, "::ffff:%u.%u.%u.%u", raw[12], raw[13], raw[14],
             raw[15]);
    return;
  }
  snprintf(out, cap,
           "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
           "%02x%02x",
           raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
           raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14],
           raw[15]);
}
