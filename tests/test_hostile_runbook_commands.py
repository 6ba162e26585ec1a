"""A crafted AsciiDoc file beside a good runbook: ``runbook source sync`` (a real git repository)
and ``runbook ingest`` skip it with a reason, index the good one, and the file costs at most a
fixed CPU time and peak RSS over the same command without it (which loads the embedding model:
about 3 s and 390 MB), measured from the command's own resource usage.

Before the expansion was bounded, the 1.6 KB file below took about 10 s of CPU in the prose
patterns (a 10 KB one, in ``test_formats_budget``, several minutes).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from rag import Store
from tests.git_repos import GitRepo
from tests.test_slack_cli import REPO

CPU_SECONDS = 5.0
PEAK_RSS_MB = 300.0
GOOD = "# Disk full\n\n## Mitigation\nDelete old WAL segments only after a verified backup.\n"
# A 1 KB value on a line of 200 references: a 200 KB word for the prose patterns.
HOSTILE = ":a: " + "x" * 1_000 + "\n\n= Explode\n\n" + "{a}" * 200 + "\n"
REASON = "attribute references expand to more than"

# Runs the command as its child and reports the child's CPU time and peak RSS (Linux: KiB).
_MEASURE = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=600)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
                  "cpu": used.ru_utime + used.ru_stime, "rss_mb": used.ru_maxrss / 1024}))
"""


@dataclass(frozen=True)
class Measured:
    returncode: int
    stdout: str
    stderr: str
    cpu: float
    rss_mb: float


def measured_runbook(*args: str, env: dict[str, str]) -> Measured:
    command = [sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main())"]
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=660,
        check=True,
    )
    return Measured(**json.loads(done.stdout))


def command_env(database_url: str, data_dir: Path) -> dict[str, str]:
    import os

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "RUNBOOK_"))}
    return {
        **clean,
        "DATABASE_URL": database_url,
        "RUNBOOK_DATA_DIR": str(data_dir),
        "RUNBOOK_SOURCE_ALLOW_FILE": "true",
    }


def within_budget(run: Measured, baseline: Measured) -> None:
    assert run.cpu - baseline.cpu <= CPU_SECONDS, (
        f"{run.cpu:.1f} s of CPU, {baseline.cpu:.1f} without"
    )
    extra_rss = run.rss_mb - baseline.rss_mb
    assert extra_rss <= PEAK_RSS_MB, f"{run.rss_mb:.0f} MB peak RSS, {baseline.rss_mb:.0f} without"


def repository(root: Path, *, hostile: bool) -> GitRepo:
    repo = GitRepo(root)
    repo.write("disk.md", GOOD)
    if hostile:
        repo.write("explode.adoc", HOSTILE)
    repo.commit("runbooks")
    return repo


@pytest.mark.slow  # six CLI runs, each loading the embedding model
async def test_a_hostile_asciidoc_file_is_skipped_within_budget_by_source_sync_and_ingest(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    env = command_env(database_url, tmp_path / "data")
    runs: dict[str, dict[str, Measured]] = {}
    for kind in ("baseline", "hostile"):
        repo = repository(tmp_path / kind, hostile=kind == "hostile")
        tenant = f"{unique_tenant}-{kind}"
        added = measured_runbook("source", "add", tenant, "git", repo.url, env=env)
        assert added.returncode == 0, added.stderr
        runs[kind] = {
            "sync": measured_runbook("source", "sync", "--tenant", tenant, "--json", env=env),
            "ingest": measured_runbook(
                "ingest", str(repo.root), "--tenant", f"{tenant}-folder", "--json", env=env
            ),
        }

    synced, ingested = runs["hostile"]["sync"], runs["hostile"]["ingest"]
    within_budget(synced, runs["baseline"]["sync"])
    within_budget(ingested, runs["baseline"]["ingest"])
    # The file is skipped with its reason (not a failure): both commands succeed.
    assert (synced.returncode, ingested.returncode) == (0, 0), synced.stderr + ingested.stderr
    sync = json.loads(synced.stdout)["sources"][0]["report"]
    assert sync["documents"]["added"] == 1
    assert [s["path"] for s in sync["skipped"]] == ["explode.adoc"]
    assert REASON in sync["skipped"][0]["reason"] and sync["failures"] == []
    ingest = json.loads(ingested.stdout)
    assert ingest["documents"]["added"] == 1
    assert "explode.adoc" in json.dumps(ingest.get("skipped")) and REASON in json.dumps(ingest)
