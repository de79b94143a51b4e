#!/bin/sh
# The library and the hipobj command open the same GPU and verbs libraries:
# both take their sonames from src/platform/sonames.h, and no other source
# of src/ or tools/hipobj/ spells one out (a second list would drift, as the
# command's did: it lacked libamdhip64.so.7).
set -eu
root=$1
re='"lib(amdhip64|cuda|hsa-runtime64|ibverbs)\.so(\.[0-9]+)*"'
stray=$(grep -rnE "$re" "$root/src" "$root/tools/hipobj" \
          --include='*.c' --include='*.h' | grep -v 'src/platform/sonames.h' || true)
if [ -n "$stray" ]; then
  echo "sonames outside src/platform/sonames.h:"
  echo "$stray"
  exit 1
fi
for f in src/platform/gpu_hip.c src/platform/gpu_cuda.c src/platform/verbs_dl.c \
         tools/hipobj/gpu.c tools/hipobj/cmd_info.c; do
  grep -q 'sonames.h"' "$root/$f" || { echo "$f does not include sonames.h"; exit 1; }
done
grep -q 'HO_HIP_SONAMES;' "$root/src/platform/gpu_hip.c" &&
  grep -q 'HO_HIP_SONAMES;' "$root/tools/hipobj/gpu.c" ||
  { echo "the HIP loaders do not both use HO_HIP_SONAMES"; exit 1; }
echo "one list of sonames, used by the library and the command"
