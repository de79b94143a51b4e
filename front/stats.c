/* SPDX-License-Identifier: MIT */
#include "stats.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
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
