#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Python package on a real GPU (the project's H200 machine: CUDA, torch
# and libcurl headers, no RDMA device, no libmicrohttpd, no package index).
# Builds libhipobj and libhipobj_s3 (no server, no tests), installs the
# package with pip into the build directory, and runs python/tests/gpu
# against an in-process plain-HTTP S3 stand-in.
#   bash python/tests/gpu/run-h200.sh [build-dir]
set -u -o pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build-h200-py}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBUILD_TESTING=OFF -DHIPOBJ_BUILD_SERVER=OFF >"$build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target hipobj hipobj_s3 \
    >>"$build.log" 2>&1 || { tail -n 30 "$build.log"; echo "gpu: BUILD FAILED"; exit 1; }
HIPOBJ_BUILD_DIR="$build" python3 -m pip install -q --no-build-isolation \
  --no-deps --no-index --target "$build/python-site" "$root/python" \
  >>"$build.log" 2>&1 || { tail -n 30 "$build.log"; echo "gpu: PIP FAILED"; exit 1; }
rm -rf "$root/python/build" "$root/python/hipobj.egg-info"
cd "$root/python/tests/gpu"
export PYTHONPATH="$build/python-site"
if python3 -c 'import pytest' 2>/dev/null; then
  exec python3 -m pytest -p no:cacheprovider -rs -v .
fi
echo "(pytest is not installed: test_gpu.py runs as a script)"
exec python3 test_gpu.py
