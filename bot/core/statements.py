"""``Statement``: one SQL statement with its parameters, kept to be sent with others in one round
trip (``send_together``) instead of a round trip each.

Every round trip wakes this event loop and a Postgres backend: an answer's own writes (its row,
its facts, its job's link) go as one, and so does a job's end with what its run left for it
(where the card was posted) (docs/benchmarks.md, "Web and worker roles").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, LiteralString

from psycopg.rows import TupleRow

from rag import Store


@dataclass(frozen=True)
class Statement:
    query: LiteralString
    params: Mapping[str, Any]


async def send_together(store: Store, statements: Sequence[Statement]) -> list[TupleRow | None]:
    """Run ``statements`` in order, all or none, in one round trip; returns each one's first
    row (None when it returned none).

    One pipeline on an autocommit connection, without BEGIN: the statements before its one
    sync run as a single implicit transaction, which a failing statement rolls back whole
    (psycopg's ``transaction()`` would add a round trip at each end).
    """
    async with store.pool.connection() as conn:
        async with conn.pipeline():
            cursors = [await conn.execute(s.query, s.params) for s in statements]
        return [await cur.fetchone() if cur.description is not None else None for cur in cursors]
