#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A one-node Ceph with an S3 endpoint, from Debian's packages, for the Ceph
# lane (tests/ceph/run-lane.sh) and the gateway benchmark: one monitor, one
# memstore OSD (objects live in its RAM), radosgw on 127.0.0.1, no manager,
# every file under $CEPH_DIR. Writes $CEPH_DIR/s3.env (S3_ENDPOINT,
# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION). Up in about
# 5 s on a 2-core machine once installed.
#   tests/ceph/rgw-up.sh            a new cluster (CEPH_DIR must be unused)
#   tests/ceph/rgw-up.sh --rgw-only start radosgw again on the running one
# Env: CEPH_DIR (/tmp/hipobj-ceph), RGW_PORT (17480), MON_PORT (13300),
# OSD_PORT_MIN/OSD_PORT_MAX (16800/16899). Exit 77 if Ceph is not installed.
# Daemons are recorded in $CEPH_DIR/pids as "NAME PID STARTTIME";
# tests/ceph/rgw-down.sh stops exactly those.
set -euo pipefail
dir=${CEPH_DIR:-/tmp/hipobj-ceph}
rgw_port=${RGW_PORT:-17480}
mon_port=${MON_PORT:-13300}
ak=HIPOBJCEPHLANEKEY001 sk=hipobj-ceph-lane-secret-0000000000000001
rgw_id=client.rgw.lane
conf=$dir/ceph.conf
start=$(date +%s%N) last=$start
say() {
  local now; now=$(date +%s%N)
  printf 'rgw-up: %-22s %5d ms (%d ms in all)\n' "$1" $(((now - last) / 1000000)) \
    $(((now - start) / 1000000))
  last=$now
}
die() { echo "rgw-up: $*" >&2; exit 1; }
for b in ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool monmaptool uuidgen setsid curl; do
  command -v "$b" >/dev/null ||
    { echo "SKIP: $b is not installed (scripts/deps.sh installs Ceph)"; exit 77; }
done
ceph_cmd() { ceph -c "$conf" --connect-timeout 15 "$@"; }

# launch NAME CMD...: a daemon in the foreground (-f), detached, recorded
launch() {
  local name=$1; shift
  setsid "$@" -f </dev/null >>"$dir/log/$name.out" 2>&1 &
  echo "$name $! $(cut -d' ' -f22 "/proc/$!/stat")" >>"$dir/pids"
}
# until NAME TRIES CMD...: retry CMD every 0.1 s while daemon NAME lives
until_up() {
  local name=$1 tries=$2; shift 2
  local pid; pid=$(awk -v n="$name" '$1 == n { p = $2 } END { print p }' "$dir/pids")
  for _ in $(seq "$tries"); do
    "$@" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || { tail -n 20 "$dir/log/$name.out"; die "$name exited"; }
    sleep 0.1
  done
  die "$name did not come up"
}
rgw_answers() { curl -s -o /dev/null "http://127.0.0.1:$rgw_port/"; }

start_rgw() {
  launch rgw radosgw -c "$conf" -n "$rgw_id"
  until_up rgw 600 rgw_answers
  say "radosgw answers"
}

if [ "${1:-}" = --rgw-only ]; then
  [ -f "$conf" ] || die "no cluster in $dir"
  start_rgw
  exit 0
fi
[ -z "$(ls -A "$dir" 2>/dev/null)" ] || die "$dir is in use (tests/ceph/rgw-down.sh)"
mkdir -p "$dir"/{mon,osd/0,rgw,log,run,crash}
: >"$dir/pids"
fsid=$(uuidgen) osd_uuid=$(uuidgen)
cat >"$conf" <<EOF
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$mon_port]
public_addr = 127.0.0.1
ms_bind_msgr1 = false
ms_bind_ipv6 = false
ms_bind_port_min = ${OSD_PORT_MIN:-16800}
ms_bind_port_max = ${OSD_PORT_MAX:-16899}
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
keyring = $dir/keyring
run_dir = $dir/run
admin_socket = $dir/run/\$cluster-\$name.asok
pid_file = $dir/run/\$cluster-\$name.pid
log_file = $dir/log/\$cluster-\$name.log
mon_cluster_log_file = $dir/log/cluster.log
crash_dir = $dir/crash
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
mon_max_pg_per_osd = 1000
[mon]
mon_data = $dir/mon/\$id
# each pool radosgw makes is two proposals: 1 s apiece by default
paxos_propose_interval = 0.05
paxos_min_wait = 0.01
[osd]
osd_data = $dir/osd/\$id
osd_objectstore = memstore
memstore_device_bytes = ${MEMSTORE_BYTES:-8589934592}
[$rgw_id]
rgw_frontends = beast endpoint=127.0.0.1:$rgw_port
rgw_data = $dir/rgw
rgw_thread_pool_size = 64
# free deleted objects' RAM in a minute, not two hours
rgw_gc_obj_min_wait = 30
rgw_gc_processor_period = 30
EOF
kr=$dir/keyring
ceph-authtool --create-keyring "$kr" --gen-key -n mon. --cap mon 'allow *' >/dev/null
{
  ceph-authtool "$kr" --gen-key -n client.admin --cap mon 'allow *' \
    --cap osd 'allow *' --cap mgr 'allow *'
  ceph-authtool "$kr" --gen-key -n osd.0 --cap mon 'allow profile osd' \
    --cap osd 'allow *' --cap mgr 'allow profile osd'
  ceph-authtool "$kr" --gen-key -n "$rgw_id" --cap mon 'allow rw' \
    --cap osd 'allow rwx' --cap mgr 'allow rw'
} >/dev/null
monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$kr" >>"$dir/log/mon.out" 2>&1 ||
  { tail "$dir/log/mon.out"; die "ceph-mon --mkfs failed"; }
say "config, keys, mon fs"
launch mon ceph-mon -c "$conf" -i a
until_up mon 150 ceph_cmd mon stat
say "monitor up"
[ "$(ceph_cmd osd new "$osd_uuid" 0)" = 0 ] || die "osd new did not give id 0"
ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$dir/log/osd.out" 2>&1 ||
  { tail "$dir/log/osd.out"; die "ceph-osd --mkfs failed"; }
launch osd ceph-osd -c "$conf" -i 0
osd_up() { ceph_cmd osd stat | grep -q ' 1 up'; }
until_up osd 200 osd_up
say "osd up"
start_rgw
radosgw-admin -c "$conf" user create --uid lane --display-name "Ceph lane" \
  --access-key "$ak" --secret-key "$sk" >/dev/null
say "user"
cat >"$dir/s3.env" <<EOF
export S3_ENDPOINT=http://127.0.0.1:$rgw_port
export AWS_ACCESS_KEY_ID=$ak
export AWS_SECRET_ACCESS_KEY=$sk
export AWS_DEFAULT_REGION=us-east-1
EOF
echo "rgw-up: S3 at http://127.0.0.1:$rgw_port ($dir/s3.env)"
