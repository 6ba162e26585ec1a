"""Find and stop every embedded Postgres this test session started, even after a failure.

The session tags its environment; a server inherits the environment of whoever started it (this
process, or a ``runbook`` subprocess under test), so the tag tells our servers from those of
other sessions running beside us. Linux only: elsewhere nothing is found.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from rag.store.embedded_server import stop_embedded_server

SESSION_TAG = "RUNBOOK_TEST_SESSION"


def tag_this_session() -> str:
    """Mark this process's environment, once; returns the tag every server started here carries."""
    return os.environ.setdefault(SESSION_TAG, uuid.uuid4().hex)


def servers_of_session(tag: str) -> list[Path]:
    """The data folders of the running postmasters whose environment carries ``tag``."""
    marker = f"{SESSION_TAG}={tag}".encode()
    found: list[Path] = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if not argv[0].endswith(b"/postgres") or b"-D" not in argv:
                continue
            if marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found.append(Path(os.fsdecode(argv[argv.index(b"-D") + 1])))
    return found


def stop_servers_of_session(tag: str) -> list[Path]:
    """Stop them; returns their data folders."""
    stopped = servers_of_session(tag)
    for pgdata in stopped:
        stop_embedded_server(pgdata)
    return stopped
