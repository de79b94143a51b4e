#!/bin/sh
# Runs after t_hang/t_leftover: their processes must be gone (boot 2).
p=$(cat /tmp/leftover.pid)
if [ -d "/proc/$p" ]; then echo "leftover pid $p still alive"; exit 1; fi
echo "no leftovers"
