/* SPDX-License-Identifier: MIT */
/* hipobj put FILE s3://BUCKET/KEY [--gpu N | --host]: FILE into host or GPU
 * memory, then the object from there (RDMA when possible). */
#include <stdio.h>
#include <string.h>

#include "buffer.h"
#include "tool.h"

static const char usage[] =
    "usage: hipobj put FILE|- s3://BUCKET/KEY [--gpu N | --host] [options]\n"
    "                  (hipobj help for the options)\n";

static int store(struct tool_session *s, const struct tool_opts *o,
                 const char *file, const char *bucket, const char *key,
                 const char *url)
{
  hipObjS3Result_t r;
  struct tool_buf b;
  char why[300];
  if (!tool_buf_load(&b, s->gpu, file, why, sizeof why)) {
    tool_err("%s", why);
    return EXIT_LOCAL_IO;
  }
  double t0 = tool_now();
  hipObjS3Status_t st = hipObjS3PutObject(s->client, bucket, key, b.p,
                                          b.size, s->gpu ? hipObjS3MemDevice
                                                         : hipObjS3MemHost,
                                          &r);
  double t1 = tool_now();
  tool_progress_done(s->progress);
  int rc = EXIT_OK;
  if (st != hipObjS3Ok)
    rc = tool_fail(&r, url);
  else
    tool_summary(o, s, !strcmp(file, "-") ? "stdin" : file, url, &r,
                 t1 - t0);
  tool_buf_free(&b);
  return rc;
}

int cmd_put(int argc, char **argv)
{
  struct tool_opts o;
  struct tool_session s;
  char bucket[256], key[1025];
  if (!tool_parse(argc, argv, &o) || o.nargs != 2) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  if (!tool_object_url(o.args[1], bucket, sizeof bucket, key, sizeof key))
    return EXIT_USAGE;
  int rc = tool_session_open(&s, &o, true);
  if (rc == EXIT_OK)
    rc = store(&s, &o, o.args[0], bucket, key, o.args[1]);
  tool_session_close(&s);
  return rc;
}
