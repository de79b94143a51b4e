#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest python_fabric: the package's Python files next to the fabric build
# of hipobj._core, then pytest of python/tests/fabric.
#   run.sh PYTHON PACKAGE_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=$1 pkg=$2
"$py" -c 'import pytest' 2>/dev/null || { echo "SKIP: pytest is not installed (python3-pytest)"; exit 77; }
cp "$here"/../../hipobj/*.py "$pkg"/
cd "$here"
PYTHONPATH="$(dirname "$pkg")" exec "$py" -m pytest -p no:cacheprovider -rs -q .
