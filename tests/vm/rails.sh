# Sourced by the Soft-RoCE cases with two rails (tests/vm/cases/
# t23_server_rails.sh, t24_rail_failover.sh), inside the VM: a fabric of
# its own, built like tests/vm/faults.sh's fault_fabric_up (policy routing
# sends locally made packets between the two ends of a pair out of the
# pair):
#
#   rail 0: veth hr00 (10.213.3.1, rxe rxc0, the client) <-> hr01
#           (10.213.3.2, rxe rxs0, the server)
#   rail 1: veth hr10 (10.213.4.1, rxe rxc1) <-> hr11 (10.213.4.2, rxs1)
#
#   rails_fabric_up     both rails (modules, rp_filter, the local table
#                       behind the rules), then rail_up 0 and rail_up 1
#   rail_up N           rail N: the pair, its addresses, rules, routes and
#                       rxe devices; waits for their GIDs
#   rail_routes N       rail N's routes (ip route replace): the kernel
#                       flushes a device's routes when it goes down, so a
#                       link brought back up needs them again
#   rail_link N down|up the client end (hrN0) down, or up with its routes
#   rail_blackhole N ARGS  a netem with ARGS (e.g. "loss 100%") on RoCE only
#                       (UDP destination port 4791) leaving both ends of
#                       rail N; the ports stay ACTIVE
#   rail_clear N        removes it
#   rail_dropped N      the packets the netems of rail N dropped
#   rails_down          everything rails_fabric_up made
#   pair N              the bytes through rail N's pair: TX of both ends
#   pkts DEV COUNTER    an rxe hw counter (0 without one)
#   uptime_s            /proc/uptime's seconds (CLOCK_BOOTTIME)
# Each qdisc tree is faults.sh's: prio (every priority to band 2) at the
# root, a u32 filter steering the matched packets into band 3, a netem
# under band 3.
FIP=/bin/ip                # iproute2, not busybox's (tools/rxe-vm/README.md)
TC=/sbin/tc

rail_routes() {
  local n=$1 net=10.213.$((3 + $1))
  $FIP route replace $net.2 dev hr${n}0 src $net.1 table $((230 + 2 * n)) &&
    $FIP route replace $net.1 dev hr${n}1 src $net.2 table $((231 + 2 * n))
}

# rail_up N: veth hr${N}0 (10.213.$((3+N)).1, rxc$N) <-> hr${N}1 (.2, rxs$N)
rail_up() {
  local n=$1 a b net t0 t1
  a=hr${n}0 b=hr${n}1 net=10.213.$((3 + n)) t0=$((230 + 2 * n)) t1=$((231 + 2 * n))
  $FIP link add "$a" type veth peer name "$b" || return 1
  for d in $a $b; do
    $FIP link set "$d" mtu 9000 && $FIP link set "$d" up || return 1
    echo 1 > /proc/sys/net/ipv4/conf/$d/accept_local
    echo 0 > /proc/sys/net/ipv4/conf/$d/rp_filter
  done
  $FIP addr add $net.1/24 dev "$a" && $FIP addr add $net.2/24 dev "$b" || return 1
  $FIP rule add pref $((20 + 2 * n)) to $net.2 iif lo lookup $t0 &&
    $FIP rule add pref $((21 + 2 * n)) to $net.1 iif lo lookup $t1 &&
    rail_routes "$n" || return 1
  rdma link add rxc$n type rxe netdev "$a" &&
    rdma link add rxs$n type rxe netdev "$b" || return 1
  local hex i=0
  hex=$(printf '0ad5:%02x' $((3 + n)))
  while [ $i -lt 50 ]; do
    grep -qs "ffff:${hex}02" /sys/class/infiniband/rxs$n/ports/1/gids/1 &&
      grep -qs "ffff:${hex}01" /sys/class/infiniband/rxc$n/ports/1/gids/1 && break
    i=$((i + 1)); usleep 100000
  done
  $FIP route get $net.2 from $net.1 | grep -q "dev $a" || {
    echo "rails: $net.2 is not routed over $a"; return 1; }
  echo "rails: rail $n: rxc$n ($net.1, $a) <-> rxs$n ($net.2, $b)"
}

rails_fabric_up() {
  local m
  for m in veth ${RAILS_MODULES:-}; do
    modprobe "$m" || { echo "rails: modprobe $m failed"; return 1; }
  done
  echo 0 > /proc/sys/net/ipv4/conf/all/rp_filter
  # the local table behind the rules (t21's fabric may have done it already)
  if $FIP rule show | grep -q '^0:'; then
    $FIP rule add pref 100 lookup local && $FIP rule del pref 0 || return 1
  fi
  rail_up 0 && rail_up 1
}

rails_down() {
  for n in 0 1; do
    rdma link delete rxc$n 2>/dev/null; rdma link delete rxs$n 2>/dev/null
    $FIP link del hr${n}0 2>/dev/null
    $FIP rule del pref $((20 + 2 * n)) 2>/dev/null
    $FIP rule del pref $((21 + 2 * n)) 2>/dev/null
  done
}

# rail_link N down|up: the client end of rail N; up restores its routes
# and waits (5 s at most) for both rxe ports to be ACTIVE again.
rail_link() {
  local n=$1 i=0
  $FIP link set hr${n}0 "$2" || return 1
  [ "$2" = up ] || return 0
  rail_routes "$n" || return 1
  while [ $i -lt 50 ]; do
    grep -qs ACTIVE /sys/class/infiniband/rxc$n/ports/1/state &&
      grep -qs ACTIVE /sys/class/infiniband/rxs$n/ports/1/state && return 0
    i=$((i + 1)); usleep 100000
  done
  echo "rails: rxc$n or rxs$n not ACTIVE 5 s after hr${n}0 came up"
  return 1
}

rail_blackhole() {
  local n=$1 d
  shift
  for d in hr${n}0 hr${n}1; do
    $TC qdisc del dev "$d" root 2>/dev/null
    $TC qdisc add dev "$d" root handle 1: prio bands 3 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
      $TC qdisc add dev "$d" parent 1:3 handle 30: netem limit 10000 "$@" &&
      $TC filter add dev "$d" parent 1: protocol ip prio 1 u32 \
        match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3 || return 1
  done
}

rail_clear() {
  $TC qdisc del dev hr${1}0 root 2>/dev/null
  $TC qdisc del dev hr${1}1 root 2>/dev/null
  return 0
}

rail_dropped() {
  local n=$1 d v sum=0
  for d in hr${n}0 hr${n}1; do
    v=$($TC -s qdisc show dev "$d" |
      awk '/^qdisc netem/ {n = 1; next} n && /Sent/ {print; exit}' |
      sed -n 's/.*(dropped \([0-9]*\),.*/\1/p')
    sum=$((sum + ${v:-0}))
  done
  echo $sum
}

# the bytes through a veth pair, both directions: TX of both ends
tx() { $FIP -s link show dev "$1" | awk '/TX:/ {getline; print $1; exit}'; }
pair() { echo $(( $(tx hr${1}0) + $(tx hr${1}1) )); }
pkts() { cat /sys/class/infiniband/$1/ports/1/hw_counters/$2 2>/dev/null || echo 0; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }
