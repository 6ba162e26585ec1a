from __future__ import annotations

import json
import platform
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag import FastEmbedder, Settings
from rag.embedding.batches import token_budget_batches
from rag.embedding.native_heap import fix_mmap_threshold

REPO = Path(__file__).resolve().parents[1]

# Lengths from a handful of tokens to past the model's 512: the batches mix every padding width.
TEXTS = [
    "disk full",
    "Restart the payments workers in region 3 and watch the 5xx dashboard. " * 12,
    "kafka consumer lag",
    "Check replication slots before promoting the replica; " * 60,
    "",
    "Evictions climb when maxmemory is reached. " * 5,
    "KubePodCrashLooping › Diagnosis\n\nkubectl describe pod",
]


def _load(settings: Settings, **changes: int) -> Iterator[FastEmbedder]:
    embedder = FastEmbedder.load_sync(settings.model_copy(update=changes))
    try:
        yield embedder
    finally:
        embedder.close()


@pytest.fixture(scope="module")
def small_batches(settings: Settings) -> Iterator[FastEmbedder]:
    # A budget of 300 padded tokens splits TEXTS into several batches of one width each.
    yield from _load(settings, embed_batch_tokens=300)


@pytest.fixture(scope="module")
def short_input(settings: Settings) -> Iterator[FastEmbedder]:
    yield from _load(settings, embed_max_tokens=256)


@given(st.lists(st.integers(min_value=1, max_value=600), max_size=60), st.integers(64, 4096))
def test_token_budget_batches_hold_every_text_once_within_the_budget(
    lengths: list[int], budget: int
) -> None:
    batches = token_budget_batches(lengths, budget)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        widths = [lengths[i] for i in batch]
        assert widths == sorted(widths)
        assert len(batch) == 1 or len(batch) * max(widths) <= budget
    firsts = [lengths[batch[0]] for batch in batches]
    assert firsts == sorted(firsts)


def test_batched_vectors_equal_each_text_embedded_alone_in_input_order(
    small_batches: FastEmbedder,
) -> None:
    together = small_batches.embed_sync(TEXTS)
    alone = np.vstack([small_batches.embed_sync([text]) for text in TEXTS])
    assert together.shape == (len(TEXTS), small_batches.dim)
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_full_input_keeps_the_model_id_the_shipped_gate_was_fitted_for(
    embedder: FastEmbedder,
) -> None:
    gate = json.loads((REPO / "rag" / "gate" / "gate_model.json").read_text(encoding="utf-8"))
    assert embedder.model_id == gate["embedding_model"]


def test_a_shorter_input_bound_is_part_of_the_model_id(
    embedder: FastEmbedder, short_input: FastEmbedder
) -> None:
    assert short_input.model_id == f"{embedder.model_id}:max256"


def test_a_shorter_input_bound_ignores_the_words_past_it(
    embedder: FastEmbedder, short_input: FastEmbedder
) -> None:
    head = "Check replication slots before promoting the replica; " * 40
    tails = [head + "then page the database owner.", head + "kafka brokers restart slowly."]
    bounded = short_input.embed_sync(tails)
    full = embedder.embed_sync(tails)
    np.testing.assert_allclose(bounded[0], bounded[1], atol=1e-6)
    assert not np.allclose(full[0], full[1], atol=1e-6)


def test_the_mmap_threshold_is_pinned_on_glibc() -> None:
    # This image runs glibc; where there is none the call reports False instead of failing.
    assert fix_mmap_threshold() is (platform.libc_ver()[0] == "glibc")
