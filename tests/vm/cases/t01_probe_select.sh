#!/bin/sh
# hipObjInit's choices on rxe0: NIC, port, the IPv4-mapped RoCE v2 GID.
exec hipobj-vmprobe select
