"""What the learned ranker sees of each candidate: numbers normalised by the question's own list
and the tenant's own term statistics, so weights fitted on one set of runbooks carry to another.

Pure Python over at most two retrievers' candidates (80 rows); no I/O. The features:

- ``vector_rrf``, ``keyword_rrf`` — each retriever's rank as 61 / (60 + rank) (1 for a first
  place, 0 when that retriever did not return the chunk);
- ``cosine`` and ``bm25_share`` (BM25 over the best BM25 in the list);
- ``heading_terms``, ``title_terms``, ``content_terms`` — the share of the question's BM25 idf
  weight (the tenant's idf) found in the section headings below the title, in the runbook's
  title or id, and in the chunk;
- ``intent_match`` and the section's kind (``kind_*``, and ``plain_*`` when the question states
  no intent): runbooks repeat the same words in every section, the heading says which it is;
- ``match_*`` (the question asks for this kind and the section is of it) and ``other_*`` (the
  question asks for another kind): the section weights read these in place of ``intent_match``
  and ``kind_*``, so each asked kind gets its own pull and a procedure's pull as a default
  does not outweigh the Impact section an impact question asks for;
- ``exact_name``, ``loose_name``, ``service`` — scope hints (``rag.retrieval.rank.ScopeHints``);
- ``document_support`` (the best other chunk of the same runbook), ``document_cosine_gap``
  (the runbook's best cosine below the list's best) and ``document_rank``: the best runbook's
  sections come together. ``document_rank`` is 1 / (1 + (place - 1) / spread), the runbook's
  place by its best chunk over the list's own candidates per document (``spread``): where
  each document brings one candidate the place is the chunk's own rank again and counts in
  full (1 / place); where documents bring several candidates each, it counts in documents'
  worth of candidates, so a runbook second or third by a hair is not pushed below a whole
  other runbook's sections;
- ``title_only`` — a chunk with no section heading (a runbook's preamble);
- ``content_length`` — the chunk's words, log-scaled, over the longest candidate's: a two-line
  section says less than a worked procedure, whatever its heading.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from rag.retrieval.compounds import other_spellings
from rag.retrieval.evidence import Evidence
from rag.retrieval.rank import (
    RRF_K,
    ScopeHints,
    question_intents,
    section_intents,
    sectioned_documents,
)

_KINDS = ("mitigation", "diagnosis", "meaning", "impact")
FEATURES = (
    "vector_rrf",
    "keyword_rrf",
    "cosine",
    "bm25_share",
    "heading_terms",
    "title_terms",
    "content_terms",
    "intent_match",
    *(f"kind_{kind}" for kind in _KINDS),
    *(f"plain_{kind}" for kind in _KINDS),
    *(f"match_{kind}" for kind in _KINDS),
    *(f"other_{kind}" for kind in _KINDS),
    "exact_name",
    "loose_name",
    "service",
    "document_support",
    "document_cosine_gap",
    "document_rank",
    "title_only",
    "content_length",
)
_WORD = re.compile(r"[a-z0-9]+")
_CONTENT_WORD = re.compile(r"[^\W\d_][\w'-]*")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
# Postgres' english stemmer trims at most a few letters ("replicas" -> "replica").
_STEM_SLACK = 4


def candidate_features(
    found: Sequence[Evidence],
    hints: ScopeHints,
    question: str,
    *,
    term_df: Mapping[str, int],
    tenant_chunks: int,
) -> list[list[float]]:
    """One row of ``FEATURES`` per candidate, in the order of ``found``."""
    if not found:
        return []
    idf = _idf(term_df, tenant_chunks)
    total_idf = sum(idf.values()) or 1.0
    asked = question_intents(question)
    sectioned = sectioned_documents(found)
    best_cosine = max(e.cosine for e in found)
    best_bm25 = max(e.bm25 for e in found) or 1.0
    fused = {e.chunk_id: _rrf(e.vector_rank) + _rrf(e.keyword_rank) for e in found}
    per_document: dict[str, list[float]] = {}
    document_cosine: dict[str, float] = {}
    for item in found:
        per_document.setdefault(item.document_id, []).append(fused[item.chunk_id])
        document_cosine[item.document_id] = max(
            document_cosine.get(item.document_id, -1.0), item.cosine
        )
    for scores in per_document.values():
        scores.sort(reverse=True)
    lengths = {e.chunk_id: _log_words(e.content) for e in found}
    longest = max(lengths.values()) or 1.0
    by_best = sorted(per_document, key=lambda d: (-per_document[d][0], d))
    spread = len(found) / len(per_document)
    document_rank = {
        document: 1.0 / (1.0 + (place - 1) / spread)
        for place, document in enumerate(by_best, start=1)
    }
    # Per call, what candidates share: a runbook's title, a heading path, a section's kinds.
    title_shares: dict[tuple[str, str], float] = {}
    heading_shares: dict[tuple[str, ...], float] = {}
    kind_features: dict[frozenset[str], tuple[float, ...]] = {}
    rows = []
    for item in found:
        kinds = section_intents(item, asked, sectioned)
        reasons = {reason.split(":", 1)[0] for reason in hints.reasons_for(item)}
        scores = per_document[item.document_id]
        own = fused[item.chunk_id]
        other = scores[0] if own < scores[0] else (scores[1] if len(scores) > 1 else 0.0)
        path = item.heading_path[1:]
        heading_share = heading_shares.get(path)
        if heading_share is None:
            heading_share = _share(idf, _words(" ".join(path)), total_idf)
            heading_shares[path] = heading_share
        named = (item.title, item.document_id)
        title_share = title_shares.get(named)
        if title_share is None:
            title = _words(" ".join((item.title, item.document_id.rsplit("/", 1)[-1])))
            title_share = _share(idf, title, total_idf)
            title_shares[named] = title_share
        of_kind = kind_features.get(kinds)
        if of_kind is None:
            of_kind = _kind_features(kinds, asked)
            kind_features[kinds] = of_kind
        matched = set(item.matched_terms)
        rows.append(
            [
                _rrf(item.vector_rank) * (RRF_K + 1),
                _rrf(item.keyword_rank) * (RRF_K + 1),
                item.cosine,
                item.bm25 / best_bm25,
                heading_share,
                title_share,
                sum(weight for lexeme, weight in idf.items() if lexeme in matched) / total_idf,
                *of_kind,
                float("named" in reasons),
                float("named-in-words" in reasons),
                float("service" in reasons),
                other * (RRF_K + 1),
                document_cosine[item.document_id] - best_cosine,
                document_rank[item.document_id],
                float(len(item.heading_path) <= 1),
                lengths[item.chunk_id] / longest,
            ]
        )
    return rows


def _kind_features(kinds: frozenset[str], asked: frozenset[str]) -> tuple[float, ...]:
    """``intent_match``, ``kind_*``, ``plain_*``, ``match_*`` and ``other_*`` of a section."""
    return (
        float(bool(asked & kinds)),
        *(float(kind in kinds) for kind in _KINDS),
        *(float(kind in kinds and not asked) for kind in _KINDS),
        *(float(kind in kinds and kind in asked) for kind in _KINDS),
        *(float(kind in kinds and bool(asked) and kind not in asked) for kind in _KINDS),
    )


def _rrf(rank: int | None) -> float:
    return 1.0 / (RRF_K + rank) if rank is not None else 0.0


def _idf(term_df: Mapping[str, int], tenant_chunks: int) -> dict[str, float]:
    """BM25 idf, from the tenant's own statistics, of each question lexeme the tenant uses."""
    n = max(tenant_chunks, 1)
    return {
        lexeme: math.log(1 + (n - df + 0.5) / (df + 0.5))
        for lexeme, df in term_df.items()
        if df > 0
    }


def _share(idf: Mapping[str, float], words: frozenset[str], total: float) -> float:
    return sum(weight for lexeme, weight in idf.items() if _holds(words, lexeme)) / total


@lru_cache(maxsize=65536)
def _log_words(content: str) -> float:
    return math.log1p(len(_CONTENT_WORD.findall(content)))


@lru_cache(maxsize=65536)
def _words(text: str) -> frozenset[str]:
    """Lowercase words of a heading or title, CamelCase split (``KubeNodeNotReady``), with the
    other spelling of each phrasal verb in it, as the question gets (``...NotRolledOut`` also
    holds "rollout")."""
    split = _CAMEL.sub(r"\1 \2", text).lower()
    return frozenset(_WORD.findall(" ".join((split, *other_spellings(split)))))


@lru_cache(maxsize=65536)
def _holds(words: frozenset[str], lexeme: str) -> bool:
    """Whether a word is the lexeme's surface form: Postgres' stem is a prefix of the word,
    except a final ``y`` it turns into ``i`` ("memory" -> "memori")."""
    stem = lexeme[:-1] if lexeme.endswith("i") and len(lexeme) > 3 else lexeme
    return any(w.startswith(stem) and len(w) - len(lexeme) <= _STEM_SLACK for w in words)
