#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The gateway's forwarding cost on this host's own CPU (no emulation), for
bench/gateway-rgw-bench.sh: the same boto3 client GETs objects of each size
straight from the store and through hipobj-gateway (plain HTTP, no token),
in alternating rounds, and reads the gateway's CPU time (/proc/PID/stat)
around its rounds. Usage: gateway-host-bench.py STORE_URL AK SK GW_URL
GW_AK GW_SK GW_PID [ROUNDS]. Prints a markdown table."""
import os
import statistics
import sys
import time

import boto3
from botocore.config import Config

store, ak, sk, gw, gak, gsk, pid = sys.argv[1:8]
rounds = int(sys.argv[8]) if len(sys.argv) > 8 else 5
MiB = 1 << 20
sizes = [1, 4, 16, 64]
cfg = Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
direct = boto3.client("s3", endpoint_url=store, aws_access_key_id=ak,
                      aws_secret_access_key=sk, region_name="us-east-1",
                      config=cfg)
via = boto3.client("s3", endpoint_url=gw, aws_access_key_id=gak,
                   aws_secret_access_key=gsk, region_name="us-east-1",
                   config=cfg)
bucket = "gwhostbench"
direct.create_bucket(Bucket=bucket)
for s in sizes:
    direct.put_object(Bucket=bucket, Key="o%d" % s, Body=os.urandom(s * MiB))


def ticks():
    with open("/proc/%s/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return int(v[11]) + int(v[12])


def get(c, s, n=5):
    t = time.perf_counter()
    for _ in range(n):
        body = c.get_object(Bucket=bucket, Key="o%d" % s)["Body"]
        while body.read(4 * MiB):
            pass
    return n * s / (time.perf_counter() - t)


res = {(p, s): [] for p in ("gw", "direct") for s in sizes}
cpu = 0
moved = 0
for _ in range(rounds):
    for s in sizes:
        t0 = ticks()
        res["gw", s].append(get(via, s))
        cpu += ticks() - t0
        moved += 5 * s * MiB
        res["direct", s].append(get(direct, s))
hz = os.sysconf("SC_CLK_TCK")
print("| size | GET through the gateway (HTTP) MiB/s | GET straight from the store MiB/s | ratio |")
print("|---|---|---|---|")
for s in sizes:
    g = statistics.median(res["gw", s])
    d = statistics.median(res["direct", s])
    print("| %d MiB | %.0f | %.0f | %.2fx |" % (s, g, d, g / d))
print("\nMedians of %d rounds of 5 GETs per size, one boto3 stream, this "
      "host's CPU. Gateway CPU (user + system) per GB forwarded: %.2f s." %
      (rounds, cpu / hz / (moved / 1e9)))
for s in sizes:
    direct.delete_object(Bucket=bucket, Key="o%d" % s)
direct.delete_bucket(Bucket=bucket)
