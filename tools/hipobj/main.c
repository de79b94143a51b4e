/* SPDX-License-Identifier: MIT */
/* hipobj: S3 objects into and out of GPU or host memory with hipObject.
 * Uses only the public APIs of libhipobj and libhipobj_s3. */
#include <stdio.h>
#include <string.h>

#include "tool.h"

static const char help[] =
    "usage: hipobj COMMAND [OPTIONS] ARGS\n"
    "\n"
    "Commands:\n"
    "  get s3://BUCKET/KEY [-o FILE|-]   read an object (into --gpu N or host\n"
    "                                    memory), then write it to FILE\n"
    "                                    (default: the key's last part)\n"
    "  put FILE|- s3://BUCKET/KEY        write an object from FILE (through\n"
    "                                    --gpu N or host memory)\n"
    "  bench s3://BUCKET[/PREFIX]        PUT and GET throughput and latency\n"
    "  info                              GPUs, RDMA devices, the NIC and GID\n"
    "                                    hipObject would use, and why\n"
    "  help, version\n"
    "\n"
    "Options:\n"
    "  --endpoint URL      S3 endpoint (AWS_ENDPOINT_URL; default AWS)\n"
    "  --region NAME       signing region (AWS_REGION; default us-east-1)\n"
    "  --unsigned          do not sign requests, even with keys set\n"
    "  --nic NAMES         RDMA devices hipObject may use (HIPOBJ_NIC)\n"
    "  --gpu N | --host    GPU N's memory, or host memory (the default)\n"
    "  --part-size SIZE    bytes per range or part (default 1G, at most 4G)\n"
    "  --concurrency N     ranges or parts in flight (default 4)\n"
    "  --require-rdma      fail rather than fall back to plain HTTP\n"
    "  --no-rdma           plain HTTP only\n"
    "  -o, --output FILE   get: where to write ('-': stdout)\n"
    "  -v, --verbose       say more (parts, counters, the NIC)\n"
    "  -q, --quiet         say nothing on success\n"
    "  --no-progress       no progress bar\n"
    "bench: --sizes LIST (4K,64K,1M,16M)  --concurrency LIST (1,4)\n"
    "       --iterations N  --ops get,put  --json  --keep\n"
    "       --vs-http (each point again over plain HTTP, for its CPU cost)\n"
    "\n"
    "Credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN.\n"
    "Exit status: 0 ok, 1 failure, 2 usage, 3 no such bucket or key,\n"
    "4 access denied, 5 endpoint unreachable, 6 RDMA required but not\n"
    "available, 7 RDMA transfer failed, 8 GPU problem, 9 local file problem.\n";

int main(int argc, char **argv)
{
  if (argc < 2) {
    fputs(help, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "get"))
    return cmd_get(argc - 1, argv + 1);
  if (!strcmp(cmd, "put"))
    return cmd_put(argc - 1, argv + 1);
  if (!strcmp(cmd, "info"))
    return cmd_info(argc - 1, argv + 1);
  if (!strcmp(cmd, "bench"))
    return cmd_bench(argc - 1, argv + 1);
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    fputs(help, stdout);
    return EXIT_OK;
  }
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("hipobj %s (libhipobj %s)\n", HIPOBJ_TOOL_VERSION,
           hipObjGetVersionString());
    return EXIT_OK;
  }
  tool_err("unknown command '%s' (try: hipobj help)", cmd);
  return EXIT_USAGE;
}
