"""How many ONNX threads an embedding call gets: two for ingestion, one in a serving process
(its event loop needs the other core of a small replica), or exactly what is configured."""

from __future__ import annotations

import pytest

from rag import Settings


@pytest.fixture(autouse=True)
def _no_thread_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNBOOK_ONNX_THREADS", raising=False)


def test_unconfigured_threads_are_two_for_batch_work_and_one_when_serving() -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.embedding_threads == 2
    assert settings.serving().embedding_threads == 1


def test_configured_threads_hold_when_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNBOOK_ONNX_THREADS", "3")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.serving().embedding_threads == 3
    assert settings.embedding_threads == 3
