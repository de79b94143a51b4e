#!/bin/sh
# In the VM (bench/rxe-chunk.sh): hipobj-soak under RoCE faults with the
# server's WRITE/READ size (--rdma-chunk-size) and depth varied, to find
# why a transfer exhausts the QP's retry count (docs/performance.md, "Faults:
# root causes"). Per (profile, chunk): transfers, failures, the rxe
# counters of both devices (retries exhausted, go-back-N restarts,
# out-of-sequence requests, duplicates) and netem's drops.
. /payload/lib.sh
. /payload/faults.sh
: "${CHUNK_PER:=40}" "${CHUNK_CONFIGS:=1M:4 256K:8 64K:16}" "${CHUNK_PROFILES:=loss1jit loss5}"
out=${RESULTS:-/tmp}/chunk.txt
: >"$out"
fault_fabric_up || exit 1
export RXE_DEV=$FAULT_CLIENT_DEV
counters="retry_exceeded_err completer_retry_err out_of_seq_request duplicate_request rcvd_seq_err rcvd_rnr_err"
seed=300
for prof in $CHUNK_PROFILES; do
  for cfg in $CHUNK_CONFIGS; do
    chunk=${cfg%%:*} depth=${cfg##*:}
    RXE_DEV=$FAULT_SERVER_DEV start_server --rdma-qps 32 --rdma-chunk-size "$chunk" --rdma-depth "$depth" >/dev/null || exit 1
    hipobj-vmtest "$ENDPOINT" mkbucket soak >/dev/null
    case $prof in
      loss1jit) fault_roce loss 1% delay 2ms 1ms >/dev/null ;;
      loss5) fault_roce loss 5% >/dev/null ;;
      jitter) fault_roce delay 10ms 5ms >/dev/null ;;
      loss01) fault_roce loss 0.1% >/dev/null ;;
    esac
    before=""; for c in $counters; do before="$before $(fault_rxe_counter $c)"; done
    t0=$(date +%s)
    hipobj-soak "$ENDPOINT" 2 "$CHUNK_PER" $seed >/tmp/c.a 2>&1 & p1=$!
    hipobj-soak "$ENDPOINT" 2 "$CHUNK_PER" $((seed + 1)) >/tmp/c.b 2>&1 & p2=$!
    wait $p1; wait $p2
    secs=$(( $(date +%s) - t0 ))
    seed=$((seed + 2))
    drops=$(( $(fault_dropped hof0) + $(fault_dropped hof1) ))
    fault_clear roce
    line="CHUNK profile=$prof chunk=$chunk depth=$depth secs=$secs drops=$drops"
    set -- $before
    for c in $counters; do line="$line $c=$(( $(fault_rxe_counter $c) - $1 ))"; shift; done
    T=$(cat /tmp/c.a /tmp/c.b | sed -n 's/^soak: pid [0-9]*: \([0-9]*\) transfers, \([0-9]*\) failed.*/\1 \2/p' | awk '{t+=$1; f+=$2} END {print t+0, f+0}')
    echo "$line transfers=${T% *} failed=${T#* }" | tee -a "$out"
    cat /tmp/c.a /tmp/c.b | grep -v '^soak: pid' | sed 's/QP 0x[0-9a-f]*/QP _/; s/of [0-9]* bytes/of N bytes/' | sort | uniq -c | sort -rn | head -5 | tee -a "$out"
    grep -i 'completion error' /tmp/server.*.err 2>/dev/null | sed 's/QP 0x[0-9a-f]*/QP _/' | sort | uniq -c | head -3 | tee -a "$out"
    stop_server
  done
done
exit 0
