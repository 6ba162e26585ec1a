"""The learned ranker: a linear score over each candidate's features (``rag.rank_features``).

The weights are data, fitted on the dev split by a pairwise logistic model (the gold section
against every other candidate of the same question) and stored in ``rag/rank_model.json`` with
the embedding model they were fitted for; ``python -m rag.gate_fit --ranking`` refits them
(README, "How the gate was calibrated"). Deterministic: ties break on cosine, then chunk id.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

from rag.errors import ConfigurationError
from rag.evidence import Evidence
from rag.rank import ScopeHints, question_intents, section_intents
from rag.rank_features import FEATURES, candidate_features

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RankModel:
    embedding_model: str
    weights: tuple[float, ...]

    @classmethod
    def load(cls, path: Path | None = None) -> RankModel:
        try:
            if path is None:
                text = resources.files("rag").joinpath("rank_model.json").read_text("utf-8")
            else:
                text = path.read_text(encoding="utf-8")
            data = json.loads(text)
            weights = tuple(float(data["weights"][name]) for name in FEATURES)
            return cls(str(data["embedding_model"]), weights)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"cannot read the ranking model: {exc}") from exc

    def score(self, row: Sequence[float]) -> float:
        return sum(w * x for w, x in zip(self.weights, row, strict=True))


@lru_cache(maxsize=1)
def shipped_model() -> RankModel:
    """``rag/rank_model.json``, read once."""
    return RankModel.load()


def fuse(
    found: Sequence[Evidence],
    hints: ScopeHints,
    question: str,
    *,
    term_df: Mapping[str, int],
    tenant_chunks: int,
    model: RankModel | None = None,
) -> tuple[Evidence, ...]:
    """The candidates scored and sorted best first, with the reasons for their place."""
    model = model or shipped_model()
    rows = candidate_features(found, hints, question, term_df=term_df, tenant_chunks=tenant_chunks)
    intents = question_intents(question)
    scored = []
    for item, row in zip(found, rows, strict=True):
        reasons = []
        if item.vector_rank is not None:
            reasons.append(f"vector#{item.vector_rank}")
        if item.keyword_rank is not None:
            reasons.append(f"keyword#{item.keyword_rank}")
        matched_intents = intents & section_intents(item)
        if matched_intents:
            reasons.append("intent:" + ",".join(sorted(matched_intents)))
        scored.append(
            replace(
                item,
                score=model.score(row),
                hit_reasons=(*reasons, *hints.reasons_for(item)),
            )
        )
    scored.sort(key=lambda e: (-e.score, -e.cosine, e.chunk_id))
    return tuple(scored)
