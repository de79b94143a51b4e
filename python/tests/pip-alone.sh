#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `pip install ./python` as a new user runs it: no installed hipObject, no
# HIPOBJ_BUILD_DIR, no package index, Debian's Python (a venv of its own,
# and one that sees Debian's packages). The build backend builds libhipobj and libhipobj_s3 with CMake
# and ships them in the package; then `pip wheel ./python` makes a wheel
# that a second venv installs, and each install is imported from outside
# the tree, its libraries checked to come from the package, and used
# against the build's hipobj-test-server. Prints one summary line.
#   python/tests/pip-alone.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
work="$build/pip-alone"
log="$work.log"
rm -rf "$work" "$root/python/build" "$root/python/hipobj.egg-info"
mkdir -p "$work"
: >"$log"
fail() { tail -n 30 "$log"; echo "python-pip: FAILED ($1)"; exit 1; }
unset HIPOBJ_BUILD_DIR
export HIPOBJ_BUNDLE=1 HIPOBJ_WERROR=1 PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# venvs without their own pip (ensurepip costs seconds): Debian's pip
# drives them (pip --python). venv-a is isolated from Debian's packages
# (the backend must find setuptools and wheel itself); venv-b sees them.
"$py" -m venv --without-pip "$work/venv-a" >>"$log" 2>&1 || fail "venv"
"$py" -m venv --without-pip --system-site-packages "$work/venv-b" \
  >>"$log" 2>&1 || fail "venv"
pip() { local v=$1; shift; "$py" -m pip --python "$work/venv-$v/bin/python" "$@"; }
pip a install "$root/python" >>"$log" 2>&1 || fail "pip install ./python"
pip a wheel --no-deps -w "$work/wheels" "$root/python" >>"$log" 2>&1 ||
  fail "pip wheel ./python"
rm -rf "$root/python/build" "$root/python/hipobj.egg-info"
pip b install "$work"/wheels/hipobj-*.whl >>"$log" 2>&1 ||
  fail "pip install the wheel"
for v in a b; do
  (cd "$work" && HIPOBJ_TEST_SERVER="$build/server/hipobj-test-server" \
     "$work/venv-$v/bin/python" "$root/python/tests/pip_smoke.py") \
     >>"$log" 2>&1 || fail "venv-$v: the installed package"
done
echo "python-pip: pip install ./python and pip wheel ./python: ok ($(tail -n1 "$log"))"
