#!/bin/sh
# Never ends on its own: the per-test timeout (boot 2) or the VM's hard
# timeout (boot 3) must stop it. What it wrote to $RESULTS before hanging must
# reach the host anyway (boot 3 runs with --results).
echo "hanging on purpose"
[ -d "$RESULTS" ] && echo "written before hanging" > "$RESULTS/hang.txt"
sleep 1000
