#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetches what tests/gpu/h200.sh needs on a GPU machine that reaches no
# package registry and lacks it: the libibverbs headers (types only: the
# library never links libibverbs), as Debian's libibverbs-dev package.
# Run it here, on a machine with apt, before sending the tree there:
#
#   bash tests/gpu/h200-deps.sh [dir]     # default: build-h200-deps/
#
# The .deb lands in dir (ignored by git, like every build* directory); take
# that directory along with the tree. h200.sh unpacks it into its build
# directory (never into /) when /usr/include/infiniband/verbs.h is missing.
# The headers' own includes <linux/types.h> and <rdma/ib_user_verbs.h> come
# from the machine's kernel headers (linux-libc-dev), which any C toolchain
# there has.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${1:-$root/build-h200-deps}
mkdir -p "$dir"
cd "$dir"
rm -f libibverbs-dev_*.deb
# apt-get download fetches into the current directory, as the caller.
apt-get download libibverbs-dev >download.log 2>&1 || {
  cat download.log
  exit 1
}
ls -l "$dir"/libibverbs-dev_*.deb
