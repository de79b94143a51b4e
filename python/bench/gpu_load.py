#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checkpoints into CUDA tensors: hipobj against boto3, same server, same
run.

    gpu_load.py [--sizes 1,4] [--repeat 3] [--json FILE]

For each size (GiB) it writes a safetensors object of bf16 tensors of
64 MiB and a DCP checkpoint of the same tensors, then times, best of
--repeat (each includes torch.cuda.synchronize()):
  hipobj.load_safetensors(url, device='cuda')  one allocation on the GPU,
      the data region read into it (RDMA into GPU memory where the client
      can; staged through host memory on the HTTP fallback);
  hipobj.dcp.StorageReader + dcp.load into preallocated CUDA tensors (one
      ranged GET per tensor, into the tensor);
  boto3 get_object(...)['Body'].read() + torch.frombuffer(...).cuda(), the
      tensors then views of the GPU copy (plain http.client GET when boto3
      is not importable, labelled so).
The server is hipobj-test-server when HIPOBJ_TEST_SERVER names one, else
the Python stand-in (python/tests/gpu/s3stub.py)."""
import argparse
import json
import os
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "gpu"))

import torch  # noqa: E402

import hipobj  # noqa: E402
from hipobj import _safetensors  # noqa: E402

GIB = 1 << 30


def server():
    binary = os.environ.get("HIPOBJ_TEST_SERVER", "")
    if os.access(binary, os.X_OK):
        from server_harness import Server
        s = Server(binary, "--random-etags", "--max-object-size", "8G")
        s.start()
        urllib.request.urlopen(urllib.request.Request(
            s.url + "/bench", data=b"", method="PUT")).close()
        return s.url, "hipobj-test-server", s.stop
    from s3stub import Stub
    st = Stub().__enter__()
    return st.url, "s3stub (Python)", lambda: st.__exit__(None, None, None)


def tensors(gib):
    g = torch.Generator(device="cuda").manual_seed(gib)
    n = (64 << 20) // 2
    return {"t%03d" % i: torch.randn(n, device="cuda", generator=g)
            .to(torch.bfloat16) for i in range(gib * 16)}


def best(f, repeat):
    times = []
    for _ in range(repeat):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = f()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        del out
    return min(times), times


def boto3_load(url, endpoint):
    bucket, key = url.split("/", 1)
    try:
        import boto3
        from botocore.config import Config
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="x", aws_secret_access_key="x",
                          config=Config(signature_version="s3v4"))

        def get():
            return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        label = "boto3 get_object + torch.frombuffer().cuda()"
    except ImportError:
        import http.client
        import urllib.parse
        u = urllib.parse.urlsplit(endpoint)

        def get():
            c = http.client.HTTPConnection(u.hostname, u.port)
            c.request("GET", "/%s/%s" % (bucket, key))
            b = c.getresponse().read()
            c.close()
            return b
        label = "http.client GET + torch.frombuffer().cuda() (no boto3)"

    def load():
        blob = get()
        n = int.from_bytes(blob[:8], "little")
        entries, _ = _safetensors.parse_header(blob[8:8 + n],
                                               len(blob) - 8 - n)
        gpu = torch.frombuffer(bytearray(blob), dtype=torch.uint8).cuda()
        return {k: gpu[8 + n + b:8 + n + e].view(torch.bfloat16)
                for k, (_, _, b, e) in entries.items()}
    return load, label


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    endpoint, kind, stop = server()
    rows = []
    try:
        # the client's defaults (1 GiB parts, 4 at a time); the stand-in
        # has no multipart: one request per object there (4 GiB at most)
        ck = {} if kind.startswith("hipobj") else {"part_size": 4 * GIB}
        c = hipobj.Client(endpoint, use_env=False, sign=False, **ck)
        print("server: %s; client rdma=%s (%s); torch %s; %s"
              % (kind, c.rdma, c.rdma_reason, torch.__version__,
                 torch.cuda.get_device_name()))
        for gib in (int(s) for s in a.sizes.split(",")):
            want = tensors(gib)
            url = "bench/m%d.safetensors" % gib
            t0 = time.perf_counter()
            hipobj.save_safetensors(want, url, client=c)
            t_save = time.perf_counter() - t0
            size = c.head(url)["size"]

            def hip():
                return hipobj.load_safetensors(url, device="cuda", client=c)
            got = hip()
            assert all(torch.equal(got[k], want[k]) for k in want)
            del got
            res = {"size_bytes": size, "gib": gib, "save_s": t_save}
            res["hipobj_load_safetensors_s"], res["hipobj_all"] = \
                best(hip, a.repeat)
            load, label = boto3_load(url, endpoint)
            got = load()
            assert all(torch.equal(got[k], want[k]) for k in want)
            del got
            res["baseline"] = label
            res["baseline_s"], res["baseline_all"] = best(load, a.repeat)
            try:
                import torch.distributed.checkpoint as dcp
                from hipobj.dcp import StorageReader, StorageWriter
                o = dict(endpoint_url=endpoint, use_env=False,
                         client_kwargs=ck)
                dcp.save(want, storage_writer=StorageWriter(
                    "s3://bench/dcp%d" % gib, **o))
                dst = {k: torch.empty_like(v) for k, v in want.items()}

                def dload():
                    dcp.load(dst, storage_reader=StorageReader(
                        "s3://bench/dcp%d" % gib, **o))
                    return None
                dload()
                assert all(torch.equal(dst[k], want[k]) for k in want)
                res["hipobj_dcp_load_s"], res["dcp_all"] = \
                    best(dload, a.repeat)
                del dst
            except ImportError as e:
                res["hipobj_dcp_load_s"] = None
                res["dcp_skipped"] = str(e)
            del want
            torch.cuda.empty_cache()
            c.delete(url)
            rows.append(res)
            print("%d GiB (%d bytes): hipobj load_safetensors %.3f s "
                  "(%.2f GB/s); hipobj DCP load %s; %s %.3f s (%.2f GB/s)"
                  % (gib, size, res["hipobj_load_safetensors_s"],
                     size / res["hipobj_load_safetensors_s"] / 1e9,
                     "%.3f s (%.2f GB/s)" % (res["hipobj_dcp_load_s"],
                                             size / res["hipobj_dcp_load_s"]
                                             / 1e9)
                     if res["hipobj_dcp_load_s"] else "skipped",
                     label, res["baseline_s"],
                     size / res["baseline_s"] / 1e9), flush=True)
        counters = c.counters()
        c.close()
    finally:
        stop()
    print("client counters: %s" % counters)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"server": kind, "rows": rows, "counters": counters,
                       "torch": torch.__version__}, f, indent=1)


if __name__ == "__main__":
    main()
