/* SPDX-License-Identifier: MIT */
#include "stats.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void hs_stats_init(struct hs_stats *s)
{
  memset(s, 0, sizeof *s);
  s->started = (int64_t)time(NULL);
}

enum hs_method hs_method_of(const char *m)
{
  static const char *names[] = {"GET", "HEAD", "PUT", "POST", "DELETE"};
  for (int i = 0; i < HS_M_OTHER; i++)
    if (strcmp(m, names[i]) == 0)
      return (enum hs_method)i;
  return HS_M_OTHER;
}

static uint64_t rd(const atomic_uint_fast64_t *c)
{
  return atomic_load_explicit(c, memory_order_relaxed);
}

static double tv_s(struct timeval t)
{
  return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* The process's CPU time since it started (getrusage: every thread, user
 * and system), and per transfer (HTTP objects in and out, RDMA transfers
 * completed) and per GB moved (HTTP and RDMA bytes, both ways): a
 * client compares two snapshots for a period's figures. */
static void cpu_json(const struct hs_stats *s, struct hs_buf *out)
{
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0)
    return;
  double user = tv_s(ru.ru_utime), sys = tv_s(ru.ru_stime);
  uint64_t n = rd(&s->http_objects_in) + rd(&s->http_objects_out) +
               rd(&s->rdma_completed);
  uint64_t bytes = rd(&s->http_bytes_in) + rd(&s->http_bytes_out) +
                   rd(&s->rdma_bytes_in) + rd(&s->rdma_bytes_out);
  hs_buf_printf(out,
                ",\"cpu\":{\"user_s\":%.6f,\"sys_s\":%.6f,\"transfers\":%llu,"
                "\"bytes\":%llu,\"ms_per_transfer\":%.4f,\"s_per_gb\":%.4f}",
                user, sys, (unsigned long long)n, (unsigned long long)bytes,
                n ? (user + sys) * 1e3 / (double)n : 0.0,
                bytes ? (user + sys) * 1e9 / (double)bytes : 0.0);
}

void hs_stats_json(const struct hs_stats *s, const char *conns,
                   const char *more, struct hs_buf *out)
{
  static const char *m[] = {"GET", "HEAD", "PUT", "POST", "DELETE", "other"};
  hs_buf_printf(out, "{\"uptime_s\":%lld,\"requests\":{",
                (long long)((int64_t)time(NULL) - s->started));
  uint64_t total = 0;
  for (int i = 0; i < HS_M_COUNT; i++) {
    hs_buf_printf(out, "\"%s\":%llu,", m[i],
                  (unsigned long long)rd(&s->requests[i]));
    total += rd(&s->requests[i]);
  }
  hs_buf_printf(out, "\"total\":%llu},\"status\":{", (unsigned long long)total);
  for (int i = 1; i < 6; i++)
    hs_buf_printf(out, "%s\"%dxx\":%llu", i > 1 ? "," : "", i,
                  (unsigned long long)rd(&s->status[i]));
  hs_buf_printf(out,
                "},\"http\":{\"bytes_in\":%llu,\"bytes_out\":%llu,"
                "\"objects_in\":%llu,\"objects_out\":%llu,"
                "\"aborted_bodies\":%llu}",
                (unsigned long long)rd(&s->http_bytes_in),
                (unsigned long long)rd(&s->http_bytes_out),
                (unsigned long long)rd(&s->http_objects_in),
                (unsigned long long)rd(&s->http_objects_out),
                (unsigned long long)rd(&s->aborted_bodies));
  hs_buf_printf(out,
                ",\"rdma\":{\"requests\":%llu,\"get\":%llu,\"put\":%llu,"
                "\"bytes_in\":%llu,\"bytes_out\":%llu,\"completed\":%llu,"
                "\"declined\":%llu,\"bad_tokens\":%llu,\"failures\":%llu}",
                (unsigned long long)rd(&s->rdma_requests),
                (unsigned long long)rd(&s->rdma_get),
                (unsigned long long)rd(&s->rdma_put),
                (unsigned long long)rd(&s->rdma_bytes_in),
                (unsigned long long)rd(&s->rdma_bytes_out),
                (unsigned long long)rd(&s->rdma_completed),
                (unsigned long long)rd(&s->rdma_declined),
                (unsigned long long)rd(&s->rdma_bad_tokens),
                (unsigned long long)rd(&s->rdma_failures));
  hs_buf_printf(out, ",\"auth_failures\":%llu",
                (unsigned long long)rd(&s->auth_failures));
  cpu_json(s, out);
  if (conns)
    hs_buf_printf(out, ",\"connections\":%s", conns);
  if (more)
    hs_buf_printf(out, ",%s", more);
  hs_buf_puts(out, "}\n");
}

enum hs_err hs_stats_write_file(const char *path, const struct hs_stats *s,
                                const char *more)
{
  struct hs_buf b, tmp;
  hs_buf_init(&b, 0);
  hs_buf_init(&tmp, 0);
  hs_stats_json(s, NULL, more, &b);
  hs_buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
  enum hs_err err = HS_ERR_IO;
  if (b.failed || tmp.failed) {
    err = HS_ERR_NOMEM;
    goto out;
  }
  int fd = open(tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    goto out;
  bool ok = write(fd, b.data, b.len) == (ssize_t)b.len;
  ok = close(fd) == 0 && ok;
  if (ok && rename(tmp.data, path) == 0)
    err = HS_OK;
  else
    unlink(tmp.data);
out:
  hs_buf_free(&b);
  hs_buf_free(&tmp);
  return err;
}
