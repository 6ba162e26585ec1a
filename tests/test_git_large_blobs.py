"""A blob over ``RUNBOOK_MAX_FILE_BYTES`` is skipped from its size before any file is read, and
the fetch leaves it on the server (issue 36): a 60 MB ``.md`` under a 1 MB cap neither raises
the sync's peak memory nor lands in the source's cache.

Each sync runs in a child process of its own, which measures how far its resident memory rises
above where it stood before the sync (``VmHWM``, reset through ``/proc/self/clear_refs``)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.git_repos import GitRepo

CAP = 1_000_000
BIG = 60 * 1024 * 1024
# The child reads the source as a sync does: listing, then batches of 50 items or 4 MB.
CHILD = """
import asyncio, json, re, sys
from pathlib import Path
from rag import GitReader, GitSourceSettings
from rag.sources.reader import read_in_batches

def status_kb(field: str) -> int:
    text = Path("/proc/self/status").read_text()
    return int(re.search(rf"^{field}:\\s+(\\d+) kB", text, re.M).group(1))

async def main(url: str, cache: str, cap: int) -> None:
    from rag import SourceAccess
    extra = {"access": SourceAccess(allow_file=True)}
    reader = GitReader(name="t", settings=GitSourceSettings(url=url), credential=None,
                       cache_dir=Path(cache), max_file_bytes=cap, **extra)
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts over here
    before_kb = status_kb("VmRSS")
    listing = await reader.list_items()
    documents, problems = [], []
    async for read in read_in_batches(reader, listing, sorted(listing.items), 50, 4_000_000):
        documents += [d.item_id for d in read.documents]
        problems += [[p.item_id, p.reason] for p in read.problems if p.skipped]
    problems += [[item, reason] for item, reason in listing.passed_over.items()]
    rise_mb = (status_kb("VmHWM") - before_kb) / 1024
    print(json.dumps({"rise_mb": rise_mb, "documents": sorted(documents),
                      "skipped": dict(problems)}))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def sync_in_child(url: str, cache: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, url, str(cache), str(CAP)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def disk_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def runbooks_repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.git("config", "uploadpack.allowFilter", "true")
    for n in range(20):
        repo.write(f"runbooks/service-{n}.md", f"# Service {n}\n\n## Restart\nRestart pod {n}.\n")
    return repo


@pytest.mark.slow  # writes and commits a 60 MB file, and starts two child processes
def test_a_60_mb_runbook_is_skipped_by_size_without_being_fetched_or_read(tmp_path: Path) -> None:
    baseline_repo = runbooks_repo(tmp_path / "baseline")
    baseline_repo.commit("runbooks")
    big_repo = runbooks_repo(tmp_path / "big")
    # Incompressible text: what a fetch of it would cost on disk is its size.
    big_repo.write(
        "runbooks/huge.md", "# Huge\n\n" + base64.b64encode(os.urandom(BIG * 3 // 4)).decode()
    )
    big_repo.commit("runbooks and a huge one")

    baseline = sync_in_child(baseline_repo.url, tmp_path / "cache-baseline")
    big = sync_in_child(big_repo.url, tmp_path / "cache-big")

    assert big["documents"] == baseline["documents"] and len(big["documents"]) == 20
    assert "runbooks/huge.md" in big["skipped"]
    assert f"{CAP}-byte cap" in big["skipped"]["runbooks/huge.md"]
    # Reading the blob whole costs its size at least once (60 MB); skipping it, nothing.
    assert big["rise_mb"] - baseline["rise_mb"] < 20, (baseline, big)
    assert disk_bytes(tmp_path / "cache-big") < 5 * 1024 * 1024
