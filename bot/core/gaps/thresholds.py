"""The gap report's fitted thresholds (``bench/gap_fit.py`` writes them from the public dev set)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

THRESHOLDS_FILE = Path(__file__).with_name("thresholds.json")


@dataclass(frozen=True)
class GapThresholds:
    # Average-linkage cosine at which two groups of questions still merge into one gap.
    cluster_similarity: float
    # Cosine a runbook's best chunk must reach to be shown as the gap's nearest runbook.
    nearest_similarity: float


def load_gap_thresholds(path: Path = THRESHOLDS_FILE) -> GapThresholds:
    fitted = json.loads(path.read_text(encoding="utf-8"))
    return GapThresholds(
        cluster_similarity=float(fitted["cluster_similarity"]["threshold"]),
        nearest_similarity=float(fitted["nearest_similarity"]["threshold"]),
    )
