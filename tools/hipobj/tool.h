/* SPDX-License-Identifier: MIT */
/* The hipobj command: what its subcommands share. */
#ifndef HIPOBJ_TOOL_H
#define HIPOBJ_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu.h"
#include "hipobj_s3.h"

/* Exit codes (docs/reference/hipobj.md). */
enum tool_exit {
  EXIT_OK = 0,
  EXIT_FAILED = 1,      /* anything not below */
  EXIT_USAGE = 2,       /* bad command line or argument */
  EXIT_NOT_FOUND = 3,   /* no such bucket or key */
  EXIT_DENIED = 4,      /* credentials or permissions */
  EXIT_UNREACHABLE = 5, /* the endpoint cannot be reached */
  EXIT_NO_RDMA = 6,     /* --require-rdma, and RDMA unavailable or declined */
  EXIT_RDMA_FAILED = 7, /* an RDMA transfer failed */
  EXIT_GPU = 8,         /* no GPU runtime or device, or a device copy failed */
  EXIT_LOCAL_IO = 9     /* a local file could not be read or written */
};

struct tool_opts {
  const char *endpoint, *region, *nic, *output;
  const char *sizes, *concurrency_list, *ops;
  uint64_t part_size;
  unsigned concurrency;
  unsigned iterations;
  int gpu;            /* -1: host memory */
  bool require_rdma, no_rdma, anonymous;
  bool verbose, quiet, no_progress, json, keep, vs_http;
  int nargs;
  char **args;
};

/* Parses argv after the subcommand's name. false: a message was printed. */
bool tool_parse(int argc, char **argv, struct tool_opts *o);

/* "1.50 GiB" */
void tool_fmt_bytes(double n, char *out, size_t cap);
double tool_now(void);

/* Prints "hipobj: MESSAGE" on stderr. */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tool_note(const struct tool_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The exit code for a failed status. */
int tool_exit_for(hipObjS3Status_t st);

/* The GPU and the client, as the options ask. */
struct tool_session {
  struct tool_gpu *gpu;
  hipObjS3Client_t *client;
  hipObjS3DeviceOps_t dev_ops;
  char nic_auto[64]; /* the NIC picked when the host has no GPU */
  struct tool_progress *progress;
};

/* Opens the GPU (--gpu), creates the client, says how bytes will move.
 * Returns an exit code; EXIT_OK on success. */
int tool_session_open(struct tool_session *s, const struct tool_opts *o,
                      bool want_progress);
void tool_session_close(struct tool_session *s);
/* A second client like the session's, plain HTTP only (bench --vs-http). */
int tool_http_client(const struct tool_session *s, const struct tool_opts *o,
                     hipObjS3Client_t **out);

/* "via RDMA", "via HTTP fallback (server declined RDMA: 501)", ... */
void tool_path_text(const hipObjS3Result_t *r, const hipObjS3Client_t *c,
                    char *out, size_t cap);
/* Prints the result's message and returns the exit code. */
int tool_fail(const hipObjS3Result_t *r, const char *what);

/* The line that closes a get or put; more with --verbose. */
void tool_summary(const struct tool_opts *o, const struct tool_session *s,
                  const char *from, const char *to,
                  const hipObjS3Result_t *r, double seconds);
/* Splits an s3://BUCKET/KEY URL; prints why not. */
bool tool_object_url(const char *url, char *bucket, size_t blen, char *key,
                     size_t klen);

/* Progress on a terminal. */
struct tool_progress *tool_progress_new(const char *label);
void tool_progress_free(struct tool_progress *p);
int tool_progress_cb(void *ctx, uint64_t done, uint64_t total);
void tool_progress_done(struct tool_progress *p);

int cmd_get(int argc, char **argv);
int cmd_put(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
