#!/bin/sh
# RXE_GID_INDEX names a RoCE v2, IPv4-mapped GID (::ffff:127.0.0.1 on lo).
set -e
d=/sys/class/infiniband/$RXE_DEV/ports/1
echo "RXE_GID_INDEX=$RXE_GID_INDEX RXE_GID=$RXE_GID RXE_NETDEV=$RXE_NETDEV"
case "$RXE_GID_INDEX" in ''|*[!0-9]*) echo "not an index"; exit 1 ;; esac
read -r gid < "$d/gids/$RXE_GID_INDEX"
read -r type < "$d/gid_attrs/types/$RXE_GID_INDEX"
echo "sysfs: gid=$gid type=$type"
case "$gid" in 0000:0000:0000:0000:0000:ffff:*) ;; *) echo "not IPv4-mapped"; exit 1 ;; esac
[ "$type" = "RoCE v2" ]
[ "$gid" = "$RXE_GID" ]
[ "$RXE_NETDEV" != lo ] || [ "$gid" = 0000:0000:0000:0000:0000:ffff:7f00:0001 ]
ibv_devinfo -v -d "$RXE_DEV" | grep "GID\[ *$RXE_GID_INDEX\]" | tee /tmp/gid.txt
grep -q '::ffff:127.0.0.1, RoCE v2' /tmp/gid.txt || [ "$RXE_NETDEV" != lo ]
