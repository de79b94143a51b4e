/* SPDX-License-Identifier: MIT */
/* RDMA devices from sysfs (/sys/class/infiniband, or below
 * $HIPOBJ_SYSFS_ROOT): names, PCI bus ids, ports and GIDs. */
#ifndef HIPOBJ_TOOL_SYSFS_H
#define HIPOBJ_TOOL_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOOL_MAX_NICS 32
#define TOOL_MAX_PORTS 4
#define TOOL_MAX_GIDS 16

struct tool_gid {
  int index;
  uint8_t raw[16];
  char type[32]; /* "RoCE v2", "IB/RoCE v1" */
  char ndev[32];
};

struct tool_port {
  int num;
  char state[32]; /* "4: ACTIVE" */
  char link_layer[32];
  struct tool_gid gids[TOOL_MAX_GIDS];
  int n_gids;
};

struct tool_nic {
  char name[64];
  char bus[32]; /* "" for a virtual device */
  int numa;
  struct tool_port ports[TOOL_MAX_PORTS];
  int n_ports;
};

/* Up to cap devices, sorted by name; 0 when there is no class directory. */
int tool_sysfs_nics(struct tool_nic *out, int cap);
const char *tool_sysfs_class_dir(char *out, size_t cap);
bool tool_port_active(const struct tool_port *p);
/* "::ffff:10.0.0.1" or the eight groups. */
void tool_gid_text(const uint8_t raw[16], char *out, size_t cap);

#endif
