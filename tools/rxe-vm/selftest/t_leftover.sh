#!/bin/sh
# Leaves a background process behind: the runner must reap it (boot 2).
sleep 1000 &
echo $! > /tmp/leftover.pid
echo "left pid $! behind"
