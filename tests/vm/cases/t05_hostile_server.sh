#!/bin/sh
# The hostile-server suite on rxe: what Soft-RoCE's memory windows refuse
# (the other direction, a replayed token, a write after the transfer, after
# a missing final) and what they do not (a window's range).
exec hipobj-vmprobe hostile
