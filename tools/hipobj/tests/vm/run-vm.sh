#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The hipobj command over real verbs: builds what the cases need (release,
# no sanitizers) and runs tools/hipobj/tests/vm/t*.sh in the Soft-RoCE VM
# (tools/rxe-vm/run.sh), with tests/vm/lib.sh for the server helpers.
#   tools/hipobj/tests/vm/run-vm.sh [--results DIR] [CASE...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../../.." && pwd)
here=$root/tools/hipobj/tests/vm
build=$root/build/vm-hipobj
results=()
if [ "${1:-}" = --results ]; then results=(--results "$2"); shift 2; fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj_s3 hipobj_cli \
  hipobj-test-server get-object put-object >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("$here"/t*.sh)
exec "$root/tools/rxe-vm/run.sh" --quiet --test-timeout 400 --timeout 1500 "${results[@]}" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/tools/hipobj/hipobj:bin/hipobj" \
  --file "$build/examples/get-object:bin/get-object" \
  --file "$build/examples/put-object:bin/put-object" \
  --file "$(command -v curl):bin/curl" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  --file "$here/vmlib.sh:vmlib.sh" \
  "${cases[@]}"
