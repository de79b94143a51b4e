#!/usr/bin/env bash
# Installs what building and testing hipObject needs on Debian 12, as root
# (or through sudo). Idempotent: packages already present are left alone.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libibverbs-dev ibverbs-providers
  libmicrohttpd-dev libcurl4-openssl-dev libssl-dev libcmocka-dev
  python3 python3-boto3 curl
  python3-dev python3-setuptools python3-wheel python3-pip python3-numpy
  python3-pytest python3-torch python3-fsspec python3-pandas python3-zarr
  python3-tqdm
  libamdhip64-dev libhsa-runtime-dev
  qemu-system-x86 kmod cpio
  ceph-mon ceph-osd radosgw ceph-common
  golang-go golang-github-minio-minio-go-v7-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "deps: installing ${missing[*]}"
log=$(mktemp /tmp/hipobj-deps.XXXXXX)
if ! { $sudo apt-get update -q &&
       DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
         --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  tail -n 30 "$log"
  echo "deps: apt-get failed (full log: $log)"
  exit 1
fi
echo "deps: installed (log: $log)"
