# Sourced by the Soft-RoCE fault cases (tests/vm/cases/t21_faults.sh) and
# the fault benchmark (bench/rxe-fault-bench-guest.sh), inside the VM.
#
# rxe0 sits on lo, and rxe hands a packet whose destination is its own
# netdev straight to its receive path: RoCE between two processes on rxe0
# never reaches lo's qdisc (measured: a netem with 100% loss on lo's UDP
# 4791 saw 0 packets while ib_write_bw ran). So the faults get a fabric of
# their own:
#
#   fault_fabric_up    veth pair hof0 (10.213.2.1) <-> hof1 (10.213.2.2),
#                      MTU 9000 (rxe MTU 4096), rxe device rxef0 on hof0
#                      (clients: FAULT_CLIENT_DEV) and rxef1 on hof1 (the
#                      server: FAULT_SERVER_DEV). Policy routing sends
#                      locally made packets between the two addresses out
#                      of the pair instead of delivering them locally, and
#                      accept_local lets the other end take them in. HTTP
#                      stays on 127.0.0.1 (lo).
#   fault_roce ARGS    a netem with ARGS (e.g. "loss 1%", "delay 10ms 5ms",
#                      "duplicate 5%", "loss 100%") on RoCE only: UDP
#                      destination port 4791 leaving hof0 and hof1, i.e.
#                      both directions. Replaces the previous profile and
#                      zeroes its counters.
#   fault_http PORT ARGS  the same for TCP port PORT (both directions) on lo.
#   fault_clear [roce|http]  removes the profile(s).
#   fault_blackout SECONDS [FILE [LINGER]]  "loss 100%" on RoCE for
#                      SECONDS, then no fault; FILE exists from the start
#                      until LINGER s (default 0) after the end (for
#                      hipobj-soak window=FILE). Runs in the background:
#                      FAULT_BLACKOUT_PID.
#   fault_dropped DEV  packets the netem on DEV dropped; fault_sent DEV the
#                      packets it sent (duplicates included); 0 without one.
#   fault_rxe_counter NAME  a hw counter summed over rxef0 and rxef1.
#
# Each qdisc tree: prio (every priority to band 2) at the root, a u32
# filter steering the matched packets into band 3, a netem under band 3.
TC=/sbin/tc                # busybox ash would run busybox's own tc
FIP=/bin/ip                # and its own ip (see tools/rxe-vm/README.md)
FAULT_CLIENT_DEV=rxef0
FAULT_SERVER_DEV=rxef1
FAULT_CLIENT_IP=10.213.2.1
FAULT_SERVER_IP=10.213.2.2

fault_fabric_up() {
  local m
  for m in veth sch_prio sch_netem cls_u32; do
    modprobe "$m" || { echo "fault: modprobe $m failed"; return 1; }
  done
  $FIP link add hof0 type veth peer name hof1 || return 1
  for d in hof0 hof1; do
    $FIP link set "$d" mtu 9000 && $FIP link set "$d" up || return 1
    echo 1 > /proc/sys/net/ipv4/conf/$d/accept_local
    echo 0 > /proc/sys/net/ipv4/conf/$d/rp_filter
  done
  echo 0 > /proc/sys/net/ipv4/conf/all/rp_filter
  $FIP addr add $FAULT_CLIENT_IP/24 dev hof0 && $FIP addr add $FAULT_SERVER_IP/24 dev hof1 || return 1
  # Locally made packets to the other end leave by the pair (iif lo is
  # "made here"); the local table moves behind these rules.
  $FIP rule add pref 10 to $FAULT_SERVER_IP iif lo lookup 210 &&
    $FIP rule add pref 11 to $FAULT_CLIENT_IP iif lo lookup 211 &&
    $FIP route add $FAULT_SERVER_IP dev hof0 src $FAULT_CLIENT_IP table 210 &&
    $FIP route add $FAULT_CLIENT_IP dev hof1 src $FAULT_SERVER_IP table 211 &&
    $FIP rule add pref 100 lookup local && $FIP rule del pref 0 || return 1
  rdma link add $FAULT_CLIENT_DEV type rxe netdev hof0 &&
    rdma link add $FAULT_SERVER_DEV type rxe netdev hof1 || return 1
  local i=0
  while [ $i -lt 50 ]; do
    grep -qs 'ffff:0ad5:0202' /sys/class/infiniband/$FAULT_SERVER_DEV/ports/1/gids/1 &&
      grep -qs 'ffff:0ad5:0201' /sys/class/infiniband/$FAULT_CLIENT_DEV/ports/1/gids/1 && break
    i=$((i + 1)); usleep 100000
  done
  $FIP route get $FAULT_SERVER_IP from $FAULT_CLIENT_IP | grep -q 'dev hof0' || {
    echo "fault: $FAULT_SERVER_IP is not routed over hof0"; return 1; }
  echo "fault: fabric $FAULT_CLIENT_DEV ($FAULT_CLIENT_IP, hof0) <-> $FAULT_SERVER_DEV ($FAULT_SERVER_IP, hof1)"
}

# fault_qdisc DEV NETEM_ARGS...: the tree of the header on DEV, no filter.
fault_qdisc() {
  local dev=$1
  shift
  $TC qdisc del dev "$dev" root 2>/dev/null
  $TC qdisc add dev "$dev" root handle 1: prio bands 3 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
    $TC qdisc add dev "$dev" parent 1:3 handle 30: netem limit 10000 "$@"
}

# fault_filter DEV U32_SELECTOR...: steer what matches into the netem.
fault_filter() {
  local dev=$1
  shift
  $TC filter add dev "$dev" parent 1: protocol ip prio 1 u32 "$@" flowid 1:3
}

fault_roce() {
  local d
  for d in hof0 hof1; do
    fault_qdisc "$d" "$@" &&
      fault_filter "$d" match ip protocol 17 0xff match ip dport 4791 0xffff || return 1
  done
  echo "fault: RoCE (udp dport 4791 leaving hof0 and hof1): netem $*"
}

fault_http() {
  local port=$1
  shift
  fault_qdisc lo "$@" &&
    fault_filter lo match ip protocol 6 0xff match ip dport "$port" 0xffff &&
    fault_filter lo match ip protocol 6 0xff match ip sport "$port" 0xffff || return 1
  echo "fault: HTTP (tcp port $port on lo, both directions): netem $*"
}

fault_clear() {
  case "${1:-all}" in
    roce) $TC qdisc del dev hof0 root 2>/dev/null; $TC qdisc del dev hof1 root 2>/dev/null ;;
    http) $TC qdisc del dev lo root 2>/dev/null ;;
    *) fault_clear roce; fault_clear http ;;
  esac
  return 0
}

fault_blackout() {
  local secs=$1 file=${2:-/tmp/fault-blackout} linger=${3:-0}
  (
    touch "$file"
    fault_roce loss 100% >/dev/null
    echo "fault: blackout on at $(cut -d' ' -f1 /proc/uptime)"
    sleep "$secs"
    fault_clear roce
    echo "fault: blackout off at $(cut -d' ' -f1 /proc/uptime)"
    sleep "$linger"
    rm -f "$file"
  ) &
  FAULT_BLACKOUT_PID=$!
}

# The netem's line of "tc -s qdisc show": Sent B bytes P pkt (dropped D, ...
fault_netem_stat() {
  $TC -s qdisc show dev "$1" | awk '/^qdisc netem/ {n = 1; next} n && /Sent/ {print; exit}'
}
fault_dropped() {
  local v
  v=$(fault_netem_stat "$1" | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p')
  echo "${v:-0}"
}
fault_sent() {
  local v
  v=$(fault_netem_stat "$1" | sed -n 's/.* bytes \([0-9]*\) pkt.*/\1/p')
  echo "${v:-0}"
}

fault_rxe_counter() {
  local sum=0 d v
  for d in $FAULT_CLIENT_DEV $FAULT_SERVER_DEV; do
    read -r v < /sys/class/infiniband/$d/ports/1/hw_counters/"$1" || v=0
    sum=$((sum + v))
  done
  echo $sum
}
