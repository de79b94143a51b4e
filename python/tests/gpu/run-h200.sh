#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Python package on a real GPU (the project's H200 machine: CUDA, torch
# 2.x and libcurl headers, no RDMA device, no libmicrohttpd, no package
# index). Installs the package as a user would, `pip install ./python`
# with nothing else (the build backend builds libhipobj and libhipobj_s3
# with CMake and ships them), into BUILD/python-site, and runs
# python/tests/gpu against hipobj-test-server when HIPOBJ_TEST_SERVER names
# one (a binary built elsewhere, carried with its libraries), else against
# an in-process plain-HTTP S3 stand-in (s3stub.py).
#   bash python/tests/gpu/run-h200.sh [build-dir]
set -u -o pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build-h200-py}
mkdir -p "$build"
rm -rf "$build/python-site" "$root/python/build"
PIP_NO_INDEX=1 python3 -m pip install -q --no-deps --target \
  "$build/python-site" "$root/python" >"$build.log" 2>&1 ||
  { tail -n 30 "$build.log"; echo "gpu: PIP FAILED"; exit 1; }
rm -rf "$root/python/build" "$root/python/hipobj.egg-info"
ls "$build/python-site/hipobj" | tr '\n' ' '; echo
cd "$root/python/tests/gpu"
export PYTHONPATH="$build/python-site${PYTHONPATH:+:$PYTHONPATH}"
if python3 -c 'import pytest' 2>/dev/null; then
  exec python3 -m pytest -p no:cacheprovider -rs -v -s .
fi
echo "(pytest is not installed: test_gpu.py runs as a script)"
exec python3 test_gpu.py
