#!/bin/sh
# ibv_rc_pingpong between two processes on the one rxe device (RC QPs,
# SEND/RECV, connection data exchanged over TCP on 127.0.0.1).
G=$RXE_GID_INDEX
timeout 60 ibv_rc_pingpong -d "$RXE_DEV" -g "$G" -n 200 > /tmp/pp-server.txt 2>&1 &
srv=$!
i=0 rc=1
while [ $i -lt 20 ]; do       # the server needs a moment to listen
  usleep 250000
  timeout 60 ibv_rc_pingpong -d "$RXE_DEV" -g "$G" -n 200 127.0.0.1 > /tmp/pp-client.txt 2>&1 && { rc=0; break; }
  grep -q "Couldn't connect" /tmp/pp-client.txt || break
  i=$((i+1))
done
wait $srv; src=$?
echo "--- client (rc=$rc)"; cat /tmp/pp-client.txt
echo "--- server (rc=$src)"; cat /tmp/pp-server.txt
[ $rc = 0 ] && [ $src = 0 ] && grep -q 'iters in' /tmp/pp-client.txt
