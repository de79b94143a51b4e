#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Python package's tests: installs python/ with pip (no index, no build
# isolation: Debian's setuptools) against a CMake build directory, then runs
# pytest against that build's hipobj-test-server. Prints one summary line.
#   python/tests/run.sh BUILD_DIR [PYTEST ARGS...]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
shift
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
site="$build/python-site"
rm -rf "$site"
if ! HIPOBJ_BUILD_DIR="$build" HIPOBJ_WERROR=1 "$py" -m pip install -q \
      --no-build-isolation --no-deps --no-index --target "$site" \
      "$root/python" >"$build/python-build.log" 2>&1; then
  tail -n 30 "$build/python-build.log"
  echo "python: BUILD FAILED"
  exit 1
fi
rm -rf "$root/python/build" "$root/python/hipobj.egg-info"
cd "$root/python/tests"
out=$(PYTHONPATH="$site" HIPOBJ_TEST_SERVER="$build/server/hipobj-test-server" \
      "$py" -m pytest -p no:cacheprovider -rs "$@" . 2>&1)
rc=$?
echo "$out" | tail -n 60
echo "python: $(echo "$out" | grep -E '(passed|failed|skipped|error)' | tail -n1 | tr -d '=' | sed 's/^ *//')"
exit $rc
