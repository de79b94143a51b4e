#!/bin/sh
# Fails on purpose: the runner must report it as failed (rc=3).
echo "failing on purpose"
exit 3
