# /usr/lib/rxe-vm/rxe-setup.sh - sourced by /init (busybox ash).
# rxe_load_modules LIST loads the modules listed (in dependency order) in
# /etc/rxe-vm/modules.LIST; rxe_setup NETDEV loads modules.boot, creates rxe0 on the requested netdev and waits for its RoCE v2 IPv4-mapped
# GID. Sets and exports RXE_DEV, RXE_NETDEV, RXE_GID_INDEX, RXE_GID.

# busybox ash runs its own applets before PATH ("standalone shell"), so
# iproute2's ip must be called by full path.
IP=/bin/ip

rxe_load_modules() {
  local m kver
  kver=$(uname -r)
  [ -f "/etc/rxe-vm/modules.$1" ] || return 0
  while read -r m; do
    [ -n "$m" ] || continue
    insmod "/lib/modules/$kver/$m" 2>/tmp/insmod.err ||
      grep -q "File exists" /tmp/insmod.err ||
      echo "@@WARN insmod $m: $(cat /tmp/insmod.err)"
  done < "/etc/rxe-vm/modules.$1"
}

# Non-zero GIDs of port 1 as "GID[i] gid type=T ndev=N". One grep over the
# whole 1024-entry table: a fork per entry costs seconds under TCG.
rxe_gids() {
  local d=/sys/class/infiniband/${1:-rxe0}/ports/1 l i g t n
  grep -H . "$d"/gids/* 2>/dev/null | grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$' |
  while IFS= read -r l; do
    i=${l%%:*}; i=${i##*/}; g=${l#*:}
    read -r t < "$d/gid_attrs/types/$i" 2>/dev/null || t=?
    read -r n < "$d/gid_attrs/ndevs/$i" 2>/dev/null || n=?
    echo "GID[$i] $g type=$t ndev=$n"
  done
}

rxe_setup() {
  local want=${1:-lo} dev i line
  rxe_load_modules boot
  $IP link set lo up
  case "$want" in
    lo) dev=lo ;;
    dummy)
      modprobe dummy && $IP link add rxed0 type dummy && $IP addr add 10.213.0.1/24 dev rxed0 &&
        $IP link set rxed0 up || return 10
      dev=rxed0 ;;
    veth)
      modprobe veth && $IP link add rxev0 type veth peer name rxev1 && $IP addr add 10.213.1.1/24 dev rxev0 &&
        $IP link set rxev1 up && $IP link set rxev0 up || return 10
      dev=rxev0 ;;
    *) echo "@@ERROR unknown rxe.netdev=$want"; return 11 ;;
  esac
  if ! rdma link add rxe0 type rxe netdev "$dev" 2>/tmp/rdma.err; then
    echo "@@ERROR rdma link add rxe0 type rxe netdev $dev: $(cat /tmp/rdma.err)"
    return 12
  fi
  RXE_DEV=rxe0 RXE_NETDEV=$dev
  export RXE_DEV RXE_NETDEV
  # ib_core fills the GID table asynchronously: wait up to 10 s for the
  # RoCE v2 IPv4-mapped entry (::ffff:a.b.c.d).
  i=0
  while [ $i -lt 100 ]; do
    line=$(rxe_gids rxe0 | grep -m1 '0000:0000:0000:0000:0000:ffff:.*type=RoCE v2')
    [ -n "$line" ] && break
    i=$((i+1)); usleep 100000
  done
  if [ -z "$line" ]; then
    echo "@@ERROR rxe0 has no RoCE v2 IPv4-mapped GID after 10 s"; rxe_gids rxe0
    return 13
  fi
  RXE_GID_INDEX=${line#GID[}; RXE_GID_INDEX=${RXE_GID_INDEX%%]*}
  RXE_GID=${line#* }; RXE_GID=${RXE_GID%% *}
  export RXE_GID_INDEX RXE_GID
  grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state ||
    echo "@@WARN rxe0 port 1 state: $(cat /sys/class/infiniband/rxe0/ports/1/state)"
  return 0
}
