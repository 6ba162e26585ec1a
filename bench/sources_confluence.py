"""A 500-page Confluence space's first sync and an incremental sync, with time and peak memory.

``python -m bench.sources_confluence [--pages 500] [--port 31256] [--output bench/results]``:
starts the shared fake Confluence (``../shared/probes/confluence_fake.py``), fills its OPS space
to ``--pages`` current pages through its control API, syncs the space (Cloud, REST v2) into a
throwaway tenant (``bench-…``, retired afterwards), edits 5 pages and trashes 1, and syncs
again. Prints one JSON object and writes it to ``sources-confluence.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bench.results_file import machine_facts, write_result
from rag import (
    Settings,
    SourceAccess,
    SyncReport,
    add_source,
    confluence_reader,
    open_runtime,
    remove_source,
    sync_source,
)

FAKE = Path(__file__).resolve().parents[2] / "shared" / "probes" / "confluence_fake.py"
EMAIL, TOKEN = "oncall-bot@kestrel.example", "kestrel-cloud-token"
RUNBOOKS_PAGE = "4325393"
_SERVICES = ("payments", "checkout", "search", "auth", "kafka", "redis", "postgres", "cdn")


def _body(rng: random.Random, n: int, edit: int = 0) -> str:
    service = rng.choice(_SERVICES)
    steps = "".join(
        f"<li>Check {service} replica {rng.randrange(100)} and restart it if stuck "
        f"(rev {edit}).</li>"
        for _ in range(5)
    )
    return (
        f"<h2>Diagnosis</h2><p>Look at the {service} dashboard for page {n}.</p>"
        f"<h2>Mitigation</h2><ol>{steps}</ol>"
        f'<ac:structured-macro ac:name="code"><ac:plain-text-body><![CDATA[kubectl -n {service} '
        f"rollout restart deploy/{service}-{n}]]></ac:plain-text-body></ac:structured-macro>"
    )


async def fill_space(
    session: aiohttp.ClientSession, site: str, pages: int, rng: random.Random
) -> list[str]:
    async with session.get(f"{site}/_fake/pages") as response:
        listed = await response.json()
    existing = listed["pages"] if isinstance(listed, dict) else listed
    current = [p for p in existing if p["space"] == "OPS" and p["status"] == "current"]
    created: list[str] = []
    for n in range(pages - len(current)):
        page = {"space": "OPS", "parentId": RUNBOOKS_PAGE, "title": f"Bench runbook {n}"}
        async with session.post(
            f"{site}/_fake/pages", json={**page, "body": _body(rng, n)}
        ) as response:
            created.append(str((await response.json())["id"]))
    return created


async def _measured(run: Any) -> tuple[SyncReport, dict[str, float]]:
    started = time.perf_counter()
    report: SyncReport = await run()
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report, {"seconds": round(seconds, 3), "peak_rss_mb": round(peak_mb, 1)}


async def run_benchmark(settings: Settings, *, pages: int, site: str) -> dict[str, Any]:
    rng = random.Random(7)
    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    async with aiohttp.ClientSession() as session:
        created = await fill_space(session, site, pages, rng)
        async with open_runtime(settings) as runtime:
            store, embedder, limits = runtime.store, runtime.embedder, runtime.ingest_limits
            source = {"base_url": f"{site}/wiki", "space": "OPS", "label": None, "email": EMAIL}
            row = await add_source(
                store,
                tenant=tenant,
                name="bench",
                kind="confluence",
                settings=source,
                credential={"token": TOKEN},
                webhook_secret={"secret": "bench"},
            )
            # The fake is on 127.0.0.1: the operator's allowance for a private network.
            reader = confluence_reader(
                f"{tenant}/bench",
                source,
                {"token": TOKEN},
                max_page_bytes=settings.max_file_bytes,
                access=SourceAccess(allow_private_networks=True),
            )
            try:
                first, first_cost = await _measured(
                    lambda: sync_source(store, embedder, row, reader, limits)
                )
                for n, page_id in enumerate(created[:5]):
                    await session.post(
                        f"{site}/_fake/pages/{page_id}", json={"body": _body(rng, n, edit=1)}
                    )
                await session.delete(f"{site}/_fake/pages/{created[5]}")
                again, again_cost = await _measured(
                    lambda: sync_source(store, embedder, row, reader, limits)
                )
                return {
                    "benchmark": "sources-confluence",
                    "machine": await machine_facts(store),
                    "embedding_model": embedder.model_id,
                    "pages": pages,
                    "first_sync": {**first_cost, **first.as_json()["documents"]},
                    "incremental_sync": {**again_cost, **again.as_json()["documents"]},
                }
            finally:
                await remove_source(store, row, prune=True)


@contextmanager
def running_fake(port: int) -> Iterator[str]:
    """The shared fake on ``port`` (lists capped at 50 a page); yields its site URL."""
    fake = subprocess.Popen(
        [sys.executable, str(FAKE), "--port", str(port), "--quiet", "--page-size", "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert fake.stdout is not None
        yield fake.stdout.readline().strip()
    finally:
        fake.terminate()
        fake.wait(timeout=10)
        if fake.stdout is not None:
            fake.stdout.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--port", type=int, default=31256)
    parser.add_argument("--output", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    with running_fake(args.port) as site:
        result = asyncio.run(run_benchmark(Settings(), pages=args.pages, site=site))
    print(write_result(args.output, "sources-confluence", result))


if __name__ == "__main__":
    main()
