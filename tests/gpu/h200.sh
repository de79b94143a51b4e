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
# kernel), runs them, and prints the results. Where cmocka and the libibverbs
# headers are also installed, it builds the whole tree and runs its unit tests
# too. Exit status: 0 when everything that ran passed.
set -u -o pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-h200}
status=0

section() { printf '\n==== %s\n' "$*"; }

section "machine"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total \
    --format=csv,noheader || true
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

section "configure and build tests/gpu"
arch=()
if command -v nvidia-smi >/dev/null; then
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
       head -1 | tr -d ' .')
  [ -n "$cc" ] && arch=(-DCMAKE_CUDA_ARCHITECTURES="$cc")
fi
if ! cmake -S "$root/tests/gpu" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DHIPOBJ_CUDA_TESTS=ON "${arch[@]}"; then
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
[ $status -eq 0 ] && echo "h200.sh: all passed" || echo "h200.sh: FAILURES"
exit $status
