#!/bin/sh
# ib_write_bw and ib_read_bw, one short run each; writes a table to
# $RESULTS/perftest.tsv to prove that results come back to the host.
G=$RXE_GID_INDEX
out=$RESULTS/perftest.tsv
printf 'test\tbytes\titers\tbw_avg_gbps\n' > "$out"
fail=0
for bw in ib_write_bw ib_read_bw; do
  timeout 60 $bw -d "$RXE_DEV" -x "$G" -s 65536 -n 100 -F --report_gbits > /tmp/bw-server.txt 2>&1 &
  srv=$!
  i=0 rc=1
  while [ $i -lt 20 ]; do
    usleep 250000
    timeout 60 $bw -d "$RXE_DEV" -x "$G" -s 65536 -n 100 -F --report_gbits 127.0.0.1 > /tmp/bw-client.txt 2>&1 && { rc=0; break; }
    grep -q "Couldn't connect\|Unable to open file descriptor" /tmp/bw-client.txt || break
    i=$((i+1))
  done
  wait $srv
  cat /tmp/bw-client.txt
  # result row: #bytes #iterations BW_peak BW_average MsgRate
  row=$(awk '$1 == 65536 && NF >= 5 {print $1 "\t" $2 "\t" $4}' /tmp/bw-client.txt)
  [ $rc = 0 ] && [ -n "$row" ] || { echo "$bw failed (rc=$rc)"; fail=1; continue; }
  printf '%s\t%s\n' "$bw" "$row" >> "$out"
done
cat "$out"
exit $fail
