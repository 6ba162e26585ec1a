"""``runbook bench ingest`` on a tiny corpus: what each setting measures and that it cleans up;
no timings are asserted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.count_embedder import CountBatchEmbedder
from bench.ingest_child import chunk_texts, measure, model_dir
from rag import FastEmbedder, Settings, Store


def write_corpus(root: Path) -> Path:
    tenant = root / "acme"
    tenant.mkdir()
    (tenant / "db-failover.md").write_text(
        "# Database failover\n\n## Diagnosis\nCheck replication lag.\n\n"
        "## Mitigation\n" + "Promote the replica and repoint the writers. " * 40 + "\n",
        encoding="utf-8",
    )
    (tenant / "disk-full.md").write_text(
        "# Disk full\n\n## Mitigation\nDelete old logs.\n", encoding="utf-8"
    )
    return root


async def test_old_settings_embed_the_same_vectors_as_the_new(
    settings: Settings, embedder: FastEmbedder
) -> None:
    texts = ["disk full", "Promote the replica and repoint the writers. " * 30, "kafka lag"]
    old = CountBatchEmbedder(model_dir(settings), settings)
    np.testing.assert_allclose(await old.embed(texts), await embedder.embed(texts), atol=1e-5)


async def test_new_setting_reports_throughput_raw_limit_and_memory_then_drops_its_tenants(
    database_url: str,
    settings: Settings,
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("RUNBOOK_DATA_DIR", str(settings.data_dir))
    corpus = write_corpus(tmp_path)

    result = await measure("new", corpus, "smoke", questions=5)

    assert result["chunks"] == result["raw_onnx"]["texts"] == len(chunk_texts(corpus, settings))
    assert result["raw_onnx"]["tokens"] > result["chunks"]
    assert result["query_ms"]["questions"] == 5
    assert result["peak_rss_mb"] > 0
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) FROM tenants WHERE tenant_id LIKE 'bench-smoke%'")
        assert await cur.fetchone() == (0,)
