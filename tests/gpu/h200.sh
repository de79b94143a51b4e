#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU seam on a real NVIDIA GPU (written for the project's H200 machine:
# CUDA under /usr/local/cuda, no RDMA device, no package registry). Needs
# cmake, a C compiler and nvcc; installs nothing.
#
#   bash tests/gpu/h200.sh [build-dir]
#
# Builds tests/gpu on its own (the CUDA runtime of the seam, the header check
# against the installed cuda.h, and test_cuda_real with its nvcc-built stall
# kernel), runs them, and prints the results. With the libibverbs headers
# (types only) it also builds and runs test_staged_e2e (the library with the
# CUDA runtime on the simulated fabric and peer: staged GET and PUT into real
# GPU memory, a real stalled staging copy) and the benchmark
# bench/gpu/stage_bench (staging copies against cudaMemcpyAsync). The headers
# come from /usr/include, or else from a libibverbs-dev .deb in
# $HIPOBJ_H200_DEPS (default: build-h200-deps/ beside the tree's build
# directories), which tests/gpu/h200-deps.sh fetches on a machine with apt;
# it is unpacked into the build directory, never into /. Where cmocka and the
# libibverbs headers are installed, it builds the whole tree and runs its unit
# tests too. HIPOBJ_H200_BENCH=0 skips the benchmark.
# Exit status: 0 when everything that ran passed (the benchmark's goals are
# reported, not counted).
set -u -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-h200}
status=0

section() { printf '\n==== %s\n' "$*"; }

section "machine"
date -u '+%Y-%m-%d %H:%M:%S UTC'
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total \
    --format=csv,noheader || true
  nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max \
    --format=csv 2>/dev/null || true
  nvidia-smi 2>/dev/null | grep -m1 'CUDA Version' || true
else
  echo "nvidia-smi not found"
fi
export PATH=$PATH:/usr/local/cuda/bin
if command -v nvcc >/dev/null; then
  nvcc --version | tail -2
else
  echo "nvcc not found: test_cuda_real cannot be built"
fi
uname -r
for f in /dev/nvidiactl /dev/nvidia0; do
  [ -e "$f" ] && echo "$f present" || echo "$f absent"
done

section "libibverbs headers (types only: libibverbs is never linked)"
verbs=()
deps=${HIPOBJ_H200_DEPS:-$root/build-h200-deps}
if [ -e /usr/include/infiniband/verbs.h ]; then
  echo "installed: /usr/include/infiniband/verbs.h"
elif [ -e "$deps/include/infiniband/verbs.h" ]; then
  echo "from $deps/include"
  verbs=(-DIBVERBS_INCLUDE_DIR="$deps/include")
elif deb=$(ls "$deps"/libibverbs-dev_*.deb 2>/dev/null | tail -1) &&
     [ -n "$deb" ]; then
  unpacked=$build/libibverbs-dev
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  if command -v dpkg-deb >/dev/null; then
    dpkg-deb -x "$deb" "$unpacked"
  else
    (cd "$unpacked" && ar x "$deb" && tar -xf data.tar.*)
  fi
  if [ -e "$unpacked/usr/include/infiniband/verbs.h" ]; then
    echo "from $(basename "$deb"), unpacked into $unpacked"
    verbs=(-DIBVERBS_INCLUDE_DIR="$unpacked/usr/include")
  else
    echo "could not unpack $deb"
  fi
else
  echo "not found: test_staged_e2e and stage_bench cannot be built" \
       "(fetch them with tests/gpu/h200-deps.sh on a machine with apt)"
fi

section "configure and build tests/gpu"
arch=()
if command -v nvidia-smi >/dev/null; then
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
       head -1 | tr -d ' .')
  [ -n "$cc" ] && arch=(-DCMAKE_CUDA_ARCHITECTURES="$cc")
fi
if ! cmake -S "$root/tests/gpu" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DHIPOBJ_CUDA_TESTS=ON "${arch[@]}" "${verbs[@]}"; then
  echo "FAIL: configure"
  exit 1
fi
if ! cmake --build "$build" -j"$(nproc)"; then
  echo "FAIL: build"
  exit 1
fi

section "check_cuda_abi (cuda_abi.h against $(ls -d /usr/local/cuda/include 2>/dev/null || echo 'cuda.h'))"
if [ -x "$build/check_cuda_abi" ]; then
  "$build/check_cuda_abi" || status=1
else
  echo "SKIP: cuda.h not found"
fi

section "test_cuda_real"
if [ -x "$build/test_cuda_real" ]; then
  HIPOBJ_RDMA_DEBUG=1 timeout 300 "$build/test_cuda_real"
  rc=$?
  case $rc in
    0) ;;
    77) echo "(skipped: no GPU)" ;;
    *) echo "test_cuda_real exit status $rc"; status=1 ;;
  esac
else
  echo "SKIP: test_cuda_real not built (no nvcc or CUDA toolkit)"
fi

section "test_staged_e2e"
if [ -x "$build/test_staged_e2e" ]; then
  timeout 300 "$build/test_staged_e2e"
  rc=$?
  case $rc in
    0) ;;
    77) echo "(skipped: no GPU)" ;;
    *) echo "test_staged_e2e exit status $rc"; status=1 ;;
  esac
elif [ -x "$build/test_cuda_real" ]; then
  echo "FAIL: test_staged_e2e not built (no libibverbs headers: see above)"
  status=1
else
  echo "SKIP: test_staged_e2e not built (no nvcc or CUDA toolkit)"
fi

section "stage_bench (bench/gpu/stage_bench.c)"
rm -f "$build/stage_bench.txt"
if [ "${HIPOBJ_H200_BENCH:-1}" = 0 ]; then
  echo "SKIP: HIPOBJ_H200_BENCH=0"
elif [ -x "$build/stage_bench" ]; then
  timeout 300 "$build/stage_bench" | tee "$build/stage_bench.txt"
  rc=${PIPESTATUS[0]}
  case $rc in
    0) ;;
    77) echo "(skipped: no GPU)" ;;
    *) echo "stage_bench exit status $rc"; status=1 ;;
  esac
elif [ -x "$build/test_cuda_real" ]; then
  echo "FAIL: stage_bench not built (no libibverbs headers: see above)"
  status=1
else
  echo "SKIP: stage_bench not built (no CUDA toolkit)"
fi

section "ctest (tests/gpu)"
(cd "$build" && ctest --output-on-failure) || status=1

section "the whole tree, if it can be built here"
missing=()
[ -e /usr/include/cmocka.h ] || missing+=("cmocka.h")
[ -e /usr/include/infiniband/verbs.h ] || missing+=("infiniband/verbs.h")
if [ ${#missing[@]} -eq 0 ]; then
  full=$build-full
  if cmake -S "$root" -B "$full" -DHIPOBJ_BUILD_SERVER=OFF \
       -DHIPOBJ_BUILD_TOOLS=OFF >/dev/null &&
     cmake --build "$full" -j"$(nproc)" >"$full.log" 2>&1; then
    (cd "$full" && ctest --output-on-failure) || status=1
  else
    echo "FAIL: the whole tree did not build (see $full.log)"
    tail -20 "$full.log" 2>/dev/null
    status=1
  fi
else
  echo "SKIP: not installed here: ${missing[*]}"
fi

section "result"
grep '^goal' "$build/stage_bench.txt" 2>/dev/null
[ $status -eq 0 ] && echo "h200.sh: all passed" || echo "h200.sh: FAILURES"
exit $status
