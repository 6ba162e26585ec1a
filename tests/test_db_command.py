"""``runbook db status|stop`` against a throwaway embedded server of its own."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag.cli import main
from rag.store.connection import start_embedded_server
from rag.store.embedded_server import embedded_server_status, stop_embedded_server


def alive(pid: int) -> bool:
    """A process that exists and is no zombie (a server this process started is its child)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@pytest.fixture
def data_dir(test_root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = test_root / f"db-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("RUNBOOK_DATA_DIR", str(path))
    try:
        yield path
    finally:
        stop_embedded_server(path / "pgdata")
        shutil.rmtree(path, ignore_errors=True)


def test_db_status_and_stop_manage_the_embedded_server(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "status"]) == 3
    assert "is not running" in capsys.readouterr().out

    start_embedded_server(data_dir / "pgdata")
    pid = embedded_server_status(data_dir / "pgdata").pid
    assert pid is not None and alive(pid)
    assert main(["db", "status"]) == 0
    assert f"is running (pid {pid})" in capsys.readouterr().out

    assert main(["db", "stop"]) == 0
    assert "stopped embedded PostgreSQL" in capsys.readouterr().out
    assert not alive(pid)
    assert main(["db", "status"]) == 3
    assert main(["db", "stop"]) == 0
    assert "not running" in capsys.readouterr().out


def test_db_commands_leave_a_configured_database_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@127.0.0.1:1/x")
    assert main(["db", "stop"]) == 2
    assert "no embedded server" in capsys.readouterr().out
