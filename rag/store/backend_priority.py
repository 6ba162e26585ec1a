"""The Postgres backend behind a connection, when it is a process of this machine, and the CPU
priority it runs at.

A process running below normal priority (a worker under ``runbook serve --role all``, a ``nice
runbook ingest``) gives its backends on this machine its own nice value: their queries are that
process's work, and at normal priority they would compete with exactly what the nice value was
meant to yield to (docs/benchmarks.md, "Web and worker roles").
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import psycopg


def local_backend_pid(conn: psycopg.AsyncConnection[Any]) -> int | None:
    """The pid of ``conn``'s backend when it is a process of this machine: reached over a Unix
    socket (the embedded server's way) and named postgres. None for a server elsewhere."""
    info = conn.info
    if not info.host.startswith("/"):
        return None
    pid = info.backend_pid
    try:
        command = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None
    return pid if command == "postgres" else None


def share_nice_with_backend(conn: psycopg.AsyncConnection[Any]) -> None:
    """Give ``conn``'s local backend this process's nice value when it is above normal; a
    backend of another user (or a server elsewhere) keeps its own."""
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    if nice <= 0:
        return
    pid = local_backend_pid(conn)
    if pid is None:
        return
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, nice)
