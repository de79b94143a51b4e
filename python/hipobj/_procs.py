# SPDX-License-Identifier: MIT
"""One hipobj.Client per process and configuration, for the integrations
(fsspec, the datasets, DCP). A process that forks (DataLoader workers,
multiprocessing) must not use its parent's client: its registrations,
connections and hipObject instance belong to the parent. So each process
makes its own on first use, and a child never closes or frees what it
inherited (those objects are kept, unused, until it exits).

Registration never crosses a fork: when the parent had a client that
could use RDMA alive when it forked (one of the integrations', or one the
application made: hipobj._core._rdma_live() asks the glue), hipObject's instance in the child is
the parent's, so the child's clients are HTTP only (rdma=False) and say so
in rdma_reason. Open no RDMA client before forking workers (the datasets
list in the parent over plain HTTP and read in the workers) and each
worker gets its own hipObject and RDMA."""
import os
import threading

from . import _core
from ._core import Client

_lock = threading.Lock()
_pid = os.getpid()
_clients = {}          # config key -> Client, of this process
_inherited = []        # what a child got from its parent: kept, never used
_rdma_opened = False   # this process opened a client that may use RDMA
_parent_rdma = False   # the process we were forked from had
_rdma_at_fork = False  # set just before a fork


def _before_fork():
    global _rdma_at_fork
    _rdma_at_fork = _rdma_opened or _core._rdma_live()


def _after_fork_in_child():
    global _pid, _clients, _rdma_opened, _parent_rdma, _lock
    _lock = threading.Lock()
    _inherited.append(_clients)
    _parent_rdma = _parent_rdma or _rdma_at_fork
    _clients = {}
    _rdma_opened = False
    _pid = os.getpid()


os.register_at_fork(before=_before_fork,
                    after_in_child=_after_fork_in_child)


def note_rdma_client(c):
    """Record that `c`, made outside this module, may use RDMA here."""
    global _rdma_opened
    if c.rdma:
        _rdma_opened = True


def forked_after_rdma():
    return _parent_rdma


def client(cfg):
    """The process's Client for `cfg` (a _s3http.Config)."""
    global _rdma_opened
    k = cfg.key_tuple()
    with _lock:
        c = _clients.get(k)
        if c is not None and not c.closed:
            return c
        kw = cfg.client_args()
        if _parent_rdma:
            kw["rdma"] = False
        c = Client(**kw)
        if c.rdma:
            _rdma_opened = True
        _clients[k] = c
        return c
