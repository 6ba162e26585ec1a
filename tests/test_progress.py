from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from rag import IngestLimits, Settings, Store, ingest_limits, ingest_path
from rag.cli import main
from rag.progress import ProgressBar
from tests.hash_embedder import HashEmbedder


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def write_runbooks(root: Path, count: int) -> None:
    for number in range(count):
        (root / f"service-{number}.md").write_text(
            f"# Service {number} is down\n\n## Mitigation\nRestart service {number}.\n",
            encoding="utf-8",
        )


def test_plain_lines_give_chunks_per_second_and_time_left_when_not_a_terminal() -> None:
    stream, clock = io.StringIO(), Clock()
    bar = ProgressBar("ingesting", stream=stream, interval_s=10.0, clock=clock)
    for now, done in ((0.0, 0), (5.0, 10), (10.0, 20), (12.0, 24), (15.0, 100)):
        clock.now = now
        bar.update(done, 100)
    bar.close()
    assert stream.getvalue().splitlines() == [
        "ingesting: 0/100 chunks, 0.0 chunks/s",
        "ingesting: 20/100 chunks, 2.0 chunks/s, 40 s left",
        "ingesting: 100/100 chunks, 6.7 chunks/s",
    ]


def test_a_terminal_gets_a_bar_with_rate_and_time_left() -> None:
    stream = Terminal()
    with ProgressBar("ingesting", stream=stream) as bar:
        bar.update(0, 50)
        bar.update(25, 50)
    drawn = stream.getvalue()
    assert "ingesting" in drawn and "25/50" in drawn and "chunk/s" in drawn and "<" in drawn


def test_nothing_is_shown_for_a_run_with_nothing_to_embed() -> None:
    stream = io.StringIO()
    with ProgressBar("ingesting", stream=stream) as bar:
        bar.update(0, 0)
    assert stream.getvalue() == ""


async def test_ingest_reports_progress_in_chunks_up_to_every_chunk_written(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    write_runbooks(tmp_path, 3)
    seen: list[tuple[int, int]] = []
    report = await ingest_path(
        store,
        HashEmbedder(),
        tmp_path,
        tenant=unique_tenant,
        prune=False,
        limits=ingest_limits(settings),
        on_progress=lambda done, total: seen.append((done, total)),
    )
    assert seen[0] == (0, report.chunks_written)
    assert seen[-1] == (report.chunks_written, report.chunks_written)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


async def test_a_new_embedding_model_re_embeds_the_store_once_and_says_so(
    store: Store,
    settings: Settings,
    unique_tenant: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    write_runbooks(tmp_path, 2)
    limits: IngestLimits = ingest_limits(settings)
    old, new = HashEmbedder(model_id="test/old"), HashEmbedder(model_id="test/new")
    await ingest_path(store, old, tmp_path, tenant=unique_tenant, prune=False, limits=limits)

    with caplog.at_level(logging.WARNING, logger="rag.ingest.pipeline"):
        changed = await ingest_path(
            store, new, tmp_path, tenant=unique_tenant, prune=False, limits=limits
        )
        again = await ingest_path(
            store, new, tmp_path, tenant=unique_tenant, prune=False, limits=limits
        )

    assert (changed.changed, again.changed, again.unchanged) == (2, 0, 2)
    messages = [
        r.getMessage()
        for r in caplog.records
        if r.name == "rag.ingest.pipeline" and r.levelno >= logging.WARNING
    ]
    assert messages == [
        f"{unique_tenant}: 2 documents were embedded with test/old-16; "
        "re-embedding them once with test/new-16"
    ]


def test_ingest_json_prints_one_object_and_no_progress(
    database_url: str,
    settings: Settings,
    unique_tenant: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("RUNBOOK_DATA_DIR", str(settings.data_dir))
    write_runbooks(tmp_path, 2)

    assert main(["ingest", str(tmp_path), "--tenant", unique_tenant, "--json"]) == 0
    quiet = capsys.readouterr()
    assert json.loads(quiet.out)["documents"]["added"] == 2
    assert quiet.err == ""

    (tmp_path / "service-0.md").write_text("# Service 0\n\nNew text.\n", encoding="utf-8")
    assert main(["ingest", str(tmp_path), "--tenant", unique_tenant]) == 0
    assert "ingesting: 1/1 chunks" in capsys.readouterr().err
