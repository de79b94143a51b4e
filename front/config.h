/* SPDX-License-Identifier: MIT */
/* The server's command line. hs_config_parse is a pure function of argv
 * (and two environment variables for the credentials), so it is tested
 * without starting anything. */
#ifndef HS_CONFIG_H
#define HS_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "auth/auth_config.h"
#include "buf.h"
#include "err.h"
#include "hipobj_server.h"

/* --nic's limits: the server library's. */
#define HS_MAX_NICS HIPOBJ_SERVER_MAX_NICS
#define HS_NIC_NAME_MAX HIPOBJ_SERVER_NIC_NAME_MAX

struct hs_config {
  char listen_host[256]; /* numeric IPv4 or IPv6 address, or a name */
  uint16_t listen_port;  /* 0: any free port */
  const char *data_dir;  /* NULL: in memory */
  const char *nic;       /* --nic: device names, comma-separated (a rail
                            each; hs_nic_list); NULL: chosen as the
                            library does */
  const char *credentials_file; /* --credentials: several users */
  /* the keys, the region, the clock skew; auth.credentials is loaded from
   * credentials_file by the program before serving (the parser reads no
   * file) */
  struct hs_auth_config auth;
  const char *stats_file;
  unsigned stats_interval_ms;
  bool decline_rdma;
  bool no_rdma;
  bool rdma_answer_first; /* no data first (docs/protocol.md, section 5) */
  bool rdma_no_pacing;    /* HIPOBJ_SERVER_NO_PACING */
  bool log_requests;
  bool random_etags;
  uint64_t max_object_size;
  uint64_t max_header_size;
  uint64_t max_xml_size;
  uint64_t min_part_size;
  unsigned max_connections;
  unsigned idle_timeout_s;
  unsigned max_buckets;
  unsigned max_uploads;
  unsigned rdma_timeout_ms;
  unsigned rdma_qps;
  unsigned rdma_queue;         /* 0: 4 x rdma_qps */
  unsigned rdma_queue_wait_ms;
  unsigned rdma_moving;        /* 0: as the library chooses */
  unsigned rdma_depth;
  unsigned rdma_max_connections; /* client connections kept (1024) */
  unsigned rdma_idle_timeout_ms; /* closed when idle this long (60000) */
  uint64_t rdma_chunk_size;
  unsigned fault_skip_final; /* testing: transfers that never send final */
  uint64_t max_memory;       /* the memory store's total; 0: half of RAM */
  unsigned multipart_expiry_s; /* 0: uploads never expire */
  unsigned max_connections_per_ip; /* 0: no limit */
  bool max_connections_per_ip_set; /* else hs_config_per_ip() derives it */
  unsigned header_timeout_s; /* a request's head must arrive in this (30) */
  bool shared_buckets; /* the test server's users of --credentials share
                          every bucket, said explicitly */
};

enum hs_config_result { HS_CONFIG_OK, HS_CONFIG_HELP, HS_CONFIG_VERSION,
                        HS_CONFIG_ERROR };

/* Defaults, then argv. On HS_CONFIG_ERROR, err holds one line saying why.
 * Strings point into argv or the environment. */
enum hs_config_result hs_config_parse(int argc, char **argv,
                                      struct hs_config *out,
                                      struct hs_buf *err);
void hs_config_usage(FILE *f);

/* For programs that share some of the server's options (hipobj-gateway):
 * the defaults, and one option by its long name ("rdma-qps"), validated as
 * hs_config_parse does (false: unknown or invalid). arg must outlive c. */
void hs_config_defaults(struct hs_config *c);
bool hs_config_set(struct hs_config *c, const char *name, const char *arg);

/* Loads c->credentials_file, if set, into c->auth.credentials (*owned: free it
 * with hs_credentials_free after the last request). Errors: those of
 * hs_credentials_load, with why. */
enum hs_err hs_config_load_credentials(struct hs_config *c,
                                       struct hs_credentials **owned,
                                       struct hs_buf *why);

/* The per-address connection limit in force: the one given, else an
 * eighth of --max-connections (at least 1), so that a few addresses
 * cannot hold every connection. 0: no limit. */
unsigned hs_config_per_ip(const struct hs_config *c);

/* --nic's list "a,b": the count of names (>= 1) and, if names is not
 * NULL, each name NUL-terminated in names[0..count). -1, with the reason
 * in why (may be NULL), for an empty name, a name of HS_NIC_NAME_MAX
 * bytes or more, a name given twice, or more than HS_MAX_NICS names. */
int hs_nic_list(const char *list, char names[][HS_NIC_NAME_MAX],
                struct hs_buf *why);

/* Why `arg` is not a valid value of option `name`, as one line into err
 * (for a usage error). */
void hs_config_explain(const char *name, const char *arg, struct hs_buf *err);

/* "HOST:PORT", "[V6]:PORT" or ":PORT" (meaning 127.0.0.1). */
bool hs_parse_listen(const char *s, char host[256], uint16_t *port);

#endif
