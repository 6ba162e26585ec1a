"""Defaults that depend on what a process does: ONNX threads (two for ingestion, one in a
serving process, whose event loop needs the other core of a small replica) and jobs in flight
(few for the CPU-bound extractive answerer, more for Claude, which waits on the network);
a configured value always holds."""

from __future__ import annotations

import pytest

from rag import Settings


@pytest.fixture(autouse=True)
def _unconfigured(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "RUNBOOK_ONNX_THREADS",
        "RUNBOOK_JOB_CONCURRENCY",
        "RUNBOOK_JOB_TENANT_CONCURRENCY",
        "ANTHROPIC_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


def _settings() -> Settings:
    return Settings(_env_file=None)  # type: ignore[call-arg]


def test_unconfigured_threads_are_two_for_batch_work_and_one_when_serving() -> None:
    settings = _settings()
    assert settings.embedding_threads == 2
    assert settings.serving().embedding_threads == 1


def test_configured_threads_hold_when_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNBOOK_ONNX_THREADS", "3")
    settings = _settings()
    assert settings.serving().embedding_threads == 3
    assert settings.embedding_threads == 3


def test_the_extractive_answerer_runs_three_jobs_at_once_all_open_to_one_tenant() -> None:
    settings = _settings()
    assert (settings.job_slots, settings.job_tenant_slots) == (3, 3)


def test_claude_runs_eight_jobs_at_once_six_of_them_for_one_tenant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    settings = _settings()
    assert (settings.job_slots, settings.job_tenant_slots) == (8, 6)


def test_configured_job_slots_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNBOOK_JOB_CONCURRENCY", "12")
    assert (_settings().job_slots, _settings().job_tenant_slots) == (12, 6)
    monkeypatch.setenv("RUNBOOK_JOB_TENANT_CONCURRENCY", "2")
    assert _settings().job_tenant_slots == 2
