#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stages the host's Debian Python for the Soft-RoCE VM (the guest has only
# busybox): python3.11, a pruned standard library, Debian's NumPy and the
# hipobj package installed from this tree against BUILD_DIR's libraries.
# Every module is compiled ahead (sourceless .pyc, the .py files dropped:
# smaller, and the guest does not compile what it imports, under TCG, on
# every boot). The lane passes the result with --file OUT:python;
# tools/rxe-vm/run.sh then brings the shared libraries of every ELF file in
# it (BLAS and LAPACK, libgfortran, libffi, ...).
#   tests/vm/python-payload.sh BUILD_DIR OUT
# Layout: OUT/bin/python3, OUT/lib/python3.11 (its prefix, found from the
# binary's place), OUT/site (numpy, hipobj: the guest's PYTHONPATH).
# Exits 77 with the reason when the host lacks python3.11, NumPy or what
# builds the package (scripts/deps.sh installs them all).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR OUT}" && pwd)
out=$(realpath -m "${2:?usage: $0 BUILD_DIR OUT}")
py=/usr/bin/python3.11
std=/usr/lib/python3.11
npdir=/usr/lib/python3/dist-packages/numpy
{ [ -x "$py" ] && [ -f "$std/os.py" ]; } || { echo "python-payload: no Debian python3.11 ($py, $std)"; exit 77; }
[ -f "$npdir/__init__.py" ] || { echo "python-payload: no python3-numpy ($npdir)"; exit 77; }
[ -f /usr/include/python3.11/Python.h ] || { echo "python-payload: no python3-dev (Python.h) to build hipobj"; exit 77; }
"$py" -c 'import importlib.util as u, sys; sys.exit(not (u.find_spec("pip") and u.find_spec("setuptools")))' || { echo "python-payload: no python3-pip or python3-setuptools to build hipobj"; exit 77; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/site"
cp "$py" "$out/bin/python3"
# the standard library without what no test imports, NumPy without its
# tests, docs, f2py and build helpers (patterns: fnmatch on the path
# relative to the tree copied; "*" matches "/" too)
"$py" - "$std" "$out/lib/python3.11" "$npdir" "$out/site/numpy" <<'PY'
import fnmatch, os, shutil, sys
STD = """__pycache__ *.pyc test idlelib tkinter turtledemo ensurepip lib2to3
pydoc_data distutils venv sqlite3 curses dbm xmlrpc wsgiref asyncio
multiprocessing concurrent config-3.11-* dist-packages site-packages
turtle.py pydoc.py lib-dynload/_codecs_* lib-dynload/_test* lib-dynload/xx*
lib-dynload/_xx* lib-dynload/_sqlite3* lib-dynload/_curses* lib-dynload/_dbm*
lib-dynload/_ctypes_test* lib-dynload/readline* lib-dynload/nis*
lib-dynload/ossaudiodev* lib-dynload/audioop* lib-dynload/_asyncio*
lib-dynload/_multiprocessing* lib-dynload/_crypt* lib-dynload/_lsprof*"""
NUMPY = """__pycache__ *.pyc */tests tests *.pyi *.pxd *.h doc f2py distutils
_pyinstaller core/include core/lib core/_operand_flag_tests.* core/_rational_tests.*
core/_struct_ufunc_tests.* core/_umath_tests.* core/_simd.* typing
array_api conftest.py setup.py */setup.py"""
def copy(src, dst, pats):
    pats = pats.split()
    def ignore(d, names):
        rel = os.path.relpath(d, src)
        out = []
        for n in names:
            p = n if rel == "." else os.path.join(rel, n)
            if any(fnmatch.fnmatchcase(p, x) for x in pats):
                out.append(n)
        return out
    shutil.copytree(src, dst, ignore=ignore, symlinks=False)
copy(sys.argv[1], sys.argv[2], STD)
copy(sys.argv[3], sys.argv[4], NUMPY)
PY
# hipobj, built against BUILD_DIR as python/tests/run.sh does
HIPOBJ_BUILD_DIR="$build" HIPOBJ_WERROR=1 "$py" -m pip install -q \
  --no-build-isolation --no-deps --no-index --target "$out/site" \
  "$root/python" >"$build/python-payload.log" 2>&1 ||
  { tail -n 30 "$build/python-payload.log"; echo "python-payload: pip install failed"; exit 1; }
rm -rf "$root/python/build" "$root/python/hipobj.egg-info" "$out"/site/*.dist-info
# sourceless bytecode: compile in place (legacy .pyc next to the source),
# then drop the sources
"$py" -m compileall -q -b -j0 "$out/lib/python3.11" "$out/site" >/dev/null
find "$out" -name '*.py' -delete
find "$out" -name __pycache__ -prune -exec rm -rf {} +
# the staged interpreter must start and import what the case needs, on the
# host, with nothing of the host's Python on its path
PYTHONNOUSERSITE=1 PYTHONPATH="$out/site" "$out/bin/python3" -I -c '
import sys; sys.path.append(sys.argv[1])
import numpy, hipobj, json, urllib.request, random, struct, threading
assert numpy.__file__.startswith(sys.argv[1]), numpy.__file__
assert hipobj.__file__.startswith(sys.argv[1]), hipobj.__file__
assert sys.prefix == sys.argv[2], (sys.prefix, sys.argv[2])
' "$out/site" "$out" || { echo "python-payload: the staged Python does not import numpy and hipobj"; exit 1; }
echo "python-payload: $(du -sh "$out" | cut -f1) in $out"
