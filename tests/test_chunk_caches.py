"""The pure-Python work an answer does per retrieved chunk is done once per chunk text: the
same runbook sections come back for question after question."""

from __future__ import annotations

from rag.answering.answerers._passages import cut_units
from rag.answering.cited_chunks import locate_quote
from rag.retrieval.terms import question_terms, term_set

CHUNK = (
    "## Failover\n\nPromote the replica with `pg_ctl promote`.\n\n"
    "Then point the “payments” service at the new primary.\n"
)


def test_a_chunk_cut_again_is_the_same_cut() -> None:
    first = cut_units(CHUNK)
    hits = cut_units.cache_info().hits
    assert cut_units(CHUNK) is first
    assert cut_units.cache_info().hits == hits + 1


def test_term_set_is_question_terms_without_weights() -> None:
    text = "Promote the replica with pg_ctl promote"
    assert term_set(text) == frozenset(question_terms(text))


def test_a_quote_is_located_the_same_way_from_the_cached_normalisation() -> None:
    quote = 'Then point the "payments" service at the new primary.'
    first = locate_quote(CHUNK, quote)
    assert first is not None and first.reflowed
    assert locate_quote(CHUNK, quote) == first
    assert CHUNK[first.start : first.end].startswith("Then point")
