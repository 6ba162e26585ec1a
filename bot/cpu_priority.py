"""Who gets a core first when the web role and the workers share a machine.

An ack costs a fraction of a millisecond of CPU in the web process and in the Postgres backend of
its intake connection, but under an answer burst each of those wake-ups used to wait for a core
behind a worker's time slice (Linux's scheduler lets a running task finish its slice before a
waking one of equal weight runs). Two unprivileged levers remove most of that wait:

- workers under ``runbook serve --role all`` run at ``RUNBOOK_WORKER_NICE`` (19 by default): the
  smallest CPU weight, so they take what the web process leaves, which is nearly every cycle;
  their Postgres backends on this machine run at the same nice (``rag.store.backend_priority``);
- the web process, and the Postgres backends of its intake connections when that server runs on
  this machine, ask for a short time slice (``sched_setattr``'s ``sched_runtime`` for a normal
  task; Linux 6.12's EEVDF scheduler lets a waking task with a shorter slice run at once).
  Older kernels ignore the value or refuse the call, which leaves the process as it was; other
  systems skip it.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import platform
import sys
from typing import Any

import psycopg

from rag import local_backend_pid

logger = logging.getLogger(__name__)

# sched_setattr(2) has no wrapper in Python or glibc; its number differs by architecture.
_SCHED_SETATTR = {"x86_64": 314, "aarch64": 274}


class _SchedAttr(ctypes.Structure):
    """``struct sched_attr`` as of Linux 3.14 (the size tells the kernel which fields follow)."""

    _fields_ = [
        ("size", ctypes.c_uint32),
        ("sched_policy", ctypes.c_uint32),
        ("sched_flags", ctypes.c_uint64),
        ("sched_nice", ctypes.c_int32),
        ("sched_priority", ctypes.c_uint32),
        ("sched_runtime", ctypes.c_uint64),
        ("sched_deadline", ctypes.c_uint64),
        ("sched_period", ctypes.c_uint64),
    ]


def lower_priority(nice: int) -> None:
    """This process at ``nice`` more than its parent (a refusal leaves it as it was)."""
    with contextlib.suppress(OSError):
        os.nice(nice)


def prefer_short_slices(slice_us: int, pid: int = 0) -> bool:
    """Ask for a ``slice_us`` time slice for ``pid`` (0: this process), keeping its nice value
    and scheduling class. False where the system has no such call or refuses it (another
    user's process), and for a process outside the normal classes."""
    number = _SCHED_SETATTR.get(platform.machine())
    if slice_us <= 0 or not sys.platform.startswith("linux") or number is None:
        return False
    try:
        nice = os.getpriority(os.PRIO_PROCESS, pid)
        policy = os.sched_getscheduler(pid)
    except OSError:
        return False
    if policy not in (os.SCHED_OTHER, os.SCHED_BATCH):
        return False  # a real-time or idle class the operator chose is theirs to keep
    attr = _SchedAttr(
        size=ctypes.sizeof(_SchedAttr),
        sched_policy=policy,
        sched_nice=nice,
        sched_runtime=slice_us * 1000,
    )
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(number, pid, ctypes.byref(attr), 0) != 0:
        logger.debug("sched_setattr(%d) refused: errno %d", pid, ctypes.get_errno())
        return False
    return True


def short_slices_for_backend(conn: psycopg.AsyncConnection[Any], slice_us: int) -> None:
    """The same short slice for ``conn``'s Postgres backend when it is a process of this
    machine (``rag.local_backend_pid``); a server elsewhere, or one run by another user, is
    left alone."""
    pid = local_backend_pid(conn)
    if pid is not None:
        prefer_short_slices(slice_us, pid)
