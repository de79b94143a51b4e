#!/usr/bin/env bash
# The Soft-RoCE lane: builds the library, the test server, the S3 glue, the
# hipobj command, the examples and the VM test programs (release, no
# sanitizers), then boots one VM with rxe0 (tools/rxe-vm/run.sh) and runs, in
# it, tests/vm/cases/*.sh (the library against the server) and
# tools/hipobj/tests/vm/t*.sh (the command and the glue), and stages the
# host's python3.11, NumPy and the hipobj package for cases/t30_python.sh
# (tests/vm/python-payload.sh). Prints the runner's
# "vm: N passed, N failed, N skipped" line; exits non-zero on any failure.
#   tests/vm/run-lane.sh [CASE...]   (default: every case)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/vm
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target hipobj hipobj_s3 hipobj_cli \
  hipobj-test-server hipobj-gateway get-object put-object hipobj-vmtest hipobj-vmprobe hipobj-soak \
  >"$build.log" 2>&1 || { tail -n 30 "$build.log"; exit 1; }
# Python for t30_python.sh; without it (exit 77) the case skips with the
# reason, which it finds in the payload
py=(--file "$root/python/tests/vm/rdma_roundtrips.py:rdma_roundtrips.py")
if out=$("$root/tests/vm/python-payload.sh" "$build" "$build/python"); then
  py+=(--file "$build/python:python")
elif [ $? -eq 77 ]; then
  echo "$out" | tee "$build/python-skip.txt"
  py+=(--file "$build/python-skip.txt:python-skip.txt")
else
  echo "$out"; exit 1
fi
# The Go bridge's VM test binary for cases/t50_go_minio.sh, when the host
# has Go and minio-go (scripts/deps.sh); without them the case skips.
gofile=()
if command -v go >/dev/null && [ -d /usr/share/gocode/src/github.com/minio/minio-go/v7 ] &&
   (ho_root=$root ho_build=$build; . "$root/integrations/go/env.sh" &&
    cd "$ho_gopkg" && go test -c -tags hipobj_vm -o "$build/hipobj-go-vmtest" ./miniordma) \
     >"$build/go-vmtest.log" 2>&1; then
  gofile=(--file "$build/hipobj-go-vmtest:bin/hipobj-go-vmtest")
else
  echo "run-lane: no Go VM test binary (see $build/go-vmtest.log): t50 skips"
fi
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("$root"/tests/vm/cases/*.sh "$root"/tools/hipobj/tests/vm/t*.sh)
exec "$root/tools/rxe-vm/run.sh" --quiet --test-timeout 900 --timeout 3000 \
  --log "$root/build/vm-lane.log" \
  --file "$build/src/libhipobj.so.0:lib/libhipobj.so.0" \
  --file "$build/integrations/curl/libhipobj_s3.so.0:lib/libhipobj_s3.so.0" \
  --file "$build/server/hipobj-test-server:bin/hipobj-test-server" \
  --file "$build/gateway/hipobj-gateway:bin/hipobj-gateway" \
  --file "$build/tools/hipobj/hipobj:bin/hipobj" \
  --file "$build/examples/get-object:bin/get-object" \
  --file "$build/examples/put-object:bin/put-object" \
  --file "$build/tests/vm/hipobj-vmtest:bin/hipobj-vmtest" \
  --file "$build/tests/vm/hipobj-vmprobe:bin/hipobj-vmprobe" \
  --file "$build/tests/vm/hipobj-soak:bin/hipobj-soak" \
  --file "$(command -v curl):bin/curl" \
  --file "$root/tests/vm/lib.sh:lib.sh" \
  --file "$root/tests/vm/faults.sh:faults.sh" \
  --file "$root/tests/vm/rails.sh:rails.sh" \
  --file "$root/tools/hipobj/tests/vm/vmlib.sh:vmlib.sh" \
  "${py[@]}" "${gofile[@]}" \
  "${cases[@]}"
