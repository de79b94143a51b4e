/* SPDX-License-Identifier: MIT */
/* hipobj get s3://BUCKET/KEY [-o FILE] [--gpu N | --host]: the object into
 * host or GPU memory (RDMA when possible), then into FILE. */
#include <stdio.h>
#include <string.h>

#include "buffer.h"
#include "tool.h"

static const char usage[] =
    "usage: hipobj get s3://BUCKET/KEY [-o FILE|-] [--gpu N | --host]\n"
    "                  [options]   (hipobj help for the options)\n";

/* -o, else the key's last component in the current directory. */
static const char *output_path(const struct tool_opts *o, const char *key)
{
  if (o->output)
    return o->output;
  const char *slash = strrchr(key, '/');
  const char *base = slash ? slash + 1 : key;
  if (!base[0] || !strcmp(base, ".") || !strcmp(base, "..")) {
    tool_err("cannot name a file after key '%s': give -o FILE", key);
    return NULL;
  }
  return base;
}

static int fetch(struct tool_session *s, const struct tool_opts *o,
                 const char *bucket, const char *key, const char *url,
                 const char *out)
{
  hipObjS3Result_t r;
  struct tool_buf b;
  char why[300];
  if (hipObjS3HeadObject(s->client, bucket, key, &r) != hipObjS3Ok)
    return tool_fail(&r, url);
  if (r.objectSize > SIZE_MAX || !tool_buf_alloc(&b, s->gpu, r.objectSize)) {
    tool_err("%s: cannot allocate %llu bytes of %s memory", url,
             (unsigned long long)r.objectSize, s->gpu ? "GPU" : "host");
    return s->gpu ? EXIT_GPU : EXIT_FAILED;
  }
  double t0 = tool_now();
  hipObjS3Status_t st = hipObjS3GetObject(s->client, bucket, key, b.p,
                                          b.size, s->gpu ? hipObjS3MemDevice
                                                         : hipObjS3MemHost,
                                          &r);
  double t1 = tool_now();
  tool_progress_done(s->progress);
  int rc = EXIT_OK;
  if (st != hipObjS3Ok)
    rc = tool_fail(&r, url);
  else if (!tool_buf_save(&b, (size_t)r.bytes, out, why, sizeof why))
    rc = (tool_err("%s", why), EXIT_LOCAL_IO);
  else
    tool_summary(o, s, url, !strcmp(out, "-") ? "stdout" : out, &r, t1 - t0);
  tool_buf_free(&b);
  return rc;
}

int cmd_get(int argc, char **argv)
{
  struct tool_opts o;
  struct tool_session s;
  char bucket[256], key[1025];
  if (!tool_parse(argc, argv, &o) || o.nargs != 1) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  if (!tool_object_url(o.args[0], bucket, sizeof bucket, key, sizeof key))
    return EXIT_USAGE;
  const char *out = output_path(&o, key);
  if (!out)
    return EXIT_USAGE;
  int rc = tool_session_open(&s, &o, true);
  if (rc == EXIT_OK)
    rc = fetch(&s, &o, bucket, key, o.args[0], out);
  tool_session_close(&s);
  return rc;
}
