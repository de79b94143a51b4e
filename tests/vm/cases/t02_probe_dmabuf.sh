#!/bin/sh
# rxe has no dma-buf MRs (EOPNOTSUPP); device memory falls back to plain MRs.
exec hipobj-vmprobe dmabuf
