"""The scale benchmark's ways of running the shipped queries: the session settings
``rag.search()`` uses on each path, and labelled alternatives that add settings on top.

Every alternative runs the shipped text (``rag.VECTOR_QUERY`` and ``rag.HYBRID_QUERY``)
unchanged: only session settings differ, so a variant measures a configuration, never a
rewrite of the SQL.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VectorMode:
    """Session settings for one way of running the queries (``SET LOCAL`` each)."""

    name: str
    exact: bool
    settings: tuple[tuple[str, str], ...]


# What rag.search() sets on each path (its defaults: ef_search = max(200, candidates)); the
# exact path's HNSW settings keep Postgres from walking a tenant partition's graph anyway.
EXACT = VectorMode(
    "exact",
    True,
    (
        ("enable_indexscan", "off"),
        ("hnsw.iterative_scan", "strict_order"),
        ("hnsw.ef_search", "1000"),
    ),
)
HNSW = VectorMode(
    "hnsw", False, (("hnsw.iterative_scan", "strict_order"), ("hnsw.ef_search", "200"))
)


@dataclass(frozen=True)
class Variant:
    """Settings added to a path's shipped ones; ``path`` None follows the service's rule."""

    name: str
    path: str | None
    extra: tuple[tuple[str, str], ...] = ()

    def mode(self, *, rule_exact: bool) -> VectorMode:
        exact = self.path == "exact" if self.path is not None else rule_exact
        settings = dict((EXACT if exact else HNSW).settings)
        settings.update(self.extra)
        return VectorMode(self.name, exact, tuple(settings.items()))


VARIANTS = {
    variant.name: variant
    for variant in (
        # The shipped settings through the variants' own runner (the hybrid statement alone,
        # without search()'s two small follow-up queries): the baseline the others compare to.
        Variant("shipped_statement", None),
        Variant("hnsw_relaxed_order", "hnsw", (("hnsw.iterative_scan", "relaxed_order"),)),
        Variant("hnsw_ef_search_100", "hnsw", (("hnsw.ef_search", "100"),)),
        Variant("hnsw_ef_search_400", "hnsw", (("hnsw.ef_search", "400"),)),
        Variant("hnsw_max_scan_tuples_100k", "hnsw", (("hnsw.max_scan_tuples", "100000"),)),
        Variant("exact_jit_off", "exact", (("jit", "off"),)),
        # The keyword half's bitmap went lossy at the 4 MB default (EXPLAIN: Heap Blocks lossy).
        Variant("work_mem_64mb", None, (("work_mem", "64MB"),)),
        # An SSD's random reads: may move the planner between a tenant's btree and HNSW.
        Variant("random_page_cost_1_1", None, (("random_page_cost", "1.1"),)),
    )
}
