/* SPDX-License-Identifier: MIT */
/* The start-up steps hipobj-test-server and hipobj-gateway share, each
 * saying on stderr what went wrong ("PROG: ..."). */
#ifndef HS_PROLOGUE_H
#define HS_PROLOGUE_H

#include <signal.h>
#include <stdio.h>

#include "auth/credentials.h"
#include "config.h"
#include "rdma.h"

/* What main() does with its parser's result: the usage (help), the version,
 * or the error and a hint. The exit status (0, or 2 for a usage error), or
 * -1 to go on (HS_CONFIG_OK). */
int hs_prologue_config(enum hs_config_result r, const char *prog,
                       const char *version, void (*usage)(FILE *f),
                       const struct hs_buf *err);
/* Loads c->credentials_file (if set) into *users; false, said, when it
 * cannot be used. */
bool hs_prologue_credentials(const char *prog, struct hs_config *c,
                             struct hs_credentials **users);
/* Opens RDMA (hs_rdma_open) and says what it found: the NIC, or that the
 * server goes on with plain HTTP (`plain`: what it then does). false,
 * said, when --nic names a device that cannot be used. */
bool hs_prologue_rdma(const char *prog, const struct hs_config *cfg,
                      struct hs_stats *stats, struct hs_rdma **out,
                      const char *plain);
/* Blocks SIGINT and SIGTERM in every thread to come (only the main thread
 * takes them, from *set) and ignores SIGPIPE. */
void hs_prologue_signals(sigset_t *set);

#endif
