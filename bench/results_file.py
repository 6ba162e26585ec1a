"""Benchmark results: the machine facts stamped on each, and where the JSON is written."""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

from rag import Store


async def machine_facts(store: Store) -> dict[str, Any]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT current_setting('server_version'), "
            "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        )
        row = await cur.fetchone()
    postgres, pgvector = row if row else (None, None)
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.machine(),
        "python": sys.version.split()[0],
        "postgres": postgres,
        "pgvector": pgvector,
    }


def write_result(output: Path, name: str, result: dict[str, Any]) -> str:
    """Write ``output/NAME.json`` and return the JSON text (benchmarks also print it)."""
    output.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=2)
    (output / f"{name}.json").write_text(text + "\n", encoding="utf-8")
    return text
