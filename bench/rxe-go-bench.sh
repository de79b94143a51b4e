#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Go bridge's GET benchmark on Soft-RoCE, in one VM boot: the VM lane's
# payload (tests/vm/run-lane.sh stages the Go VM test binary when the host
# has Go and minio-go) and bench/rxe-go-bench-guest.sh.
#   bench/rxe-go-bench.sh   (the figures: build/vm-lane.log)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tests/vm/run-lane.sh" "$root/bench/rxe-go-bench-guest.sh" || true
grep -E '^(Benchmark|goos|cpu|ok|PASS|FAIL)' "$root/build/vm-lane.log" || true
