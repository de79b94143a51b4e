#!/bin/sh
# The library, the hipobj command and Python's GPU loader open the same GPU
# and verbs libraries: all take their sonames from src/platform/sonames.h,
# and no other source of src/, tools/hipobj/ or python/src/ spells one out (a second list would drift, as the
# command's did: it lacked libamdhip64.so.7).
set -eu
root=$1
re='"lib(amdhip64|cuda|hsa-runtime64|ibverbs)\.so(\.[0-9]+)*"'
stray=$(grep -rnE "$re" "$root/src" "$root/tools/hipobj" "$root/python/src" \
          --include='*.c' --include='*.h' | grep -v 'src/platform/sonames.h' || true)
if [ -n "$stray" ]; then
  echo "sonames outside src/platform/sonames.h:"
  echo "$stray"
  exit 1
fi
for f in src/platform/gpu_hip.c src/platform/gpu_cuda.c src/platform/verbs_dl.c \
         tools/hipobj/gpu.c tools/hipobj/cmd_info.c python/src/gpu.c; do
  grep -q 'sonames.h"' "$root/$f" || { echo "$f does not include sonames.h"; exit 1; }
done
for f in src/platform/gpu_hip.c tools/hipobj/gpu.c python/src/gpu.c; do
  grep -q 'HO_HIP_SONAMES;' "$root/$f" ||
    { echo "$f does not take its HIP sonames from HO_HIP_SONAMES"; exit 1; }
done
echo "one list of sonames, used by the library, the command and Python"
