#!/usr/bin/env python3
"""Turns bench/rxe-bench-guest.sh's raw lines into the markdown table of
docs/performance.md: hipObject GET (vs ib_write_bw: the server WRITEs) and
PUT (vs ib_read_bw: the server READs), and the latency comparison."""
import re
import sys


def parse(path):
    perf, bench, lat = {}, {}, {}
    for line in open(path):
        kv = dict(re.findall(r"(\w+)=([\w.]+)", line))
        if line.startswith("LAT"):
            k = (kv["op"], int(kv["size"]), kv["path"])
            lat.setdefault(("p50",) + k, []).append(float(kv["p50_ms"]) * 1000)
            lat.setdefault(("qpt",) + k, []).append(float(kv["qpt"]))
            lat.setdefault(("reuse",) + k, []).append(float(kv["reuse"]))
            continue
        if line.startswith("PERF") and "t_typical_us" in kv:
            lat.setdefault(("wlat", int(kv["size"])), []).append(float(kv["t_typical_us"]))
            continue
        if line.startswith("PERF") and "MBps" in kv:
            perf[(kv["tool"], int(kv["size"]))] = float(kv["MBps"])
        elif line.startswith("PERF"):
            lat["pingpong"] = float(kv.get("usec_per_iter", 0))
        elif line.startswith("BENCH") and kv.get("op") == "latency":
            lat["get_p50"] = float(kv["p50_us"])
            lat["get_p99"] = float(kv["p99_us"])
        elif line.startswith("BENCH"):
            bench[(kv["op"], int(kv["size"]), int(kv["streams"]))] = float(kv["MBps"])
    return perf, bench, lat


def human(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def table(perf, bench, lat):
    rows = ["| size | GET 1 stream | GET 4 streams | ib_write_bw | GET/perftest "
            "| PUT 1 stream | PUT 4 streams | ib_read_bw | PUT/perftest |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for size in sorted({s for (_, s) in perf}):
        def b(op, st):
            v = bench.get((op, size, st))
            return v
        def f(v):
            return f"{v:.1f}" if v else "-"
        wb, rb = perf.get(("ib_write_bw", size)), perf.get(("ib_read_bw", size))
        g1, g4, p1, p4 = b("get", 1), b("get", 4), b("put", 1), b("put", 4)
        gbest = max(v for v in (g1, g4, 0) if v is not None)
        pbest = max(v for v in (p1, p4, 0) if v is not None)
        rg = f"{100 * gbest / wb:.0f}%" if wb and gbest else "-"
        rp = f"{100 * pbest / rb:.0f}%" if rb and pbest else "-"
        rows.append(f"| {human(size)} | {f(g1)} | {f(g4)} | {f(wb)} | {rg} | "
                    f"{f(p1)} | {f(p4)} | {f(rb)} | {rp} |")
    out = "\n".join(rows)
    if lat:
        out += ("\n\n| 4 KiB | hipObject GET p50 | GET p99 | ibv_rc_pingpong round trip | ratio |\n"
                "| --- | ---: | ---: | ---: | ---: |\n"
                f"| latency (us) | {lat.get('get_p50', 0):.0f} | {lat.get('get_p99', 0):.0f} | "
                f"{lat.get('pingpong', 0):.0f} | "
                f"{lat.get('get_p50', 0) / lat['pingpong']:.1f}x |" if lat.get("pingpong") else "")
    return out


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def floor_table(lat):
    lat = {k: median(v) for k, v in lat.items() if isinstance(k, tuple)}
    rows = ["| op | size | hipObject p50 (us) | HTTP p50 (us) | ib_write_lat (us) "
            "| floor (us) | ratio | reuse | QP transitions / transfer |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for op in ("GET", "PUT"):
        for size in (4096, 65536):
            r = lat.get(("p50", op, size, "RDMA"))
            h = lat.get(("p50", op, size, "HTTP"))
            w = lat.get(("wlat", size))
            if r is None or h is None or w is None:
                continue
            fl = h + w
            rows.append(f"| {op} | {human(size)} | {r:.0f} | {h:.0f} | {w:.1f} | {fl:.0f} "
                        f"| {r / fl:.2f}x | {100 * lat[('reuse', op, size, 'RDMA')]:.0f}% "
                        f"| {lat[('qpt', op, size, 'RDMA')]:.2f} |")
    return "\n".join(rows) if len(rows) > 2 else ""


def main():
    perf, bench, lat = parse(sys.argv[1])
    text = table(perf, bench, {k: v for k, v in lat.items() if isinstance(k, str)})
    floors = floor_table(lat)
    if floors:
        text += "\n\nSmall objects against their floor (the same client's plain-HTTP " \
                "request + ib_write_lat's typical latency), one server, connections kept; " \
                "medians over alternating rounds:\n\n" + floors
    print("Throughput in MB/s (10^6 bytes/s); ratio = best hipObject figure / perftest\n")
    print(text)
    if len(sys.argv) > 3 and sys.argv[2] == "--write":
        doc = sys.argv[3]
        body = open(doc).read()
        start, end = "<!-- rxe-table:begin -->", "<!-- rxe-table:end -->"
        if start in body and end in body:
            head, rest = body.split(start, 1)
            _, tail = rest.split(end, 1)
            open(doc, "w").write(f"{head}{start}\n{text}\n{end}{tail}")
            print(f"\nwritten to {doc}")


if __name__ == "__main__":
    main()
