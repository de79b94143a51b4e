#!/bin/sh
# The architecture's first ordering fails on a real RC stack (bounded retries).
exec hipobj-vmprobe original-ordering
