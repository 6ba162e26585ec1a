"""Length-sorted batches under a token budget: the model pads every text of a batch to its longest,
so texts of like length are batched together and a batch holds at most ``budget`` padded tokens."""

from __future__ import annotations

from collections.abc import Sequence


def token_budget_batches(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped into batches, shortest texts first.

    A batch's cost is its size times its longest text (what the model computes after padding);
    a batch grows while that stays within ``budget``. A text longer than the budget alone still
    gets a batch of its own. Sorting is stable, so equal lengths keep their order.
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    batch: list[int] = []
    for index in order:
        # Ascending order: the new text is the batch's longest, so it sets the padded width.
        if batch and (len(batch) + 1) * lengths[index] > budget:
            batches.append(batch)
            batch = []
        batch.append(index)
    if batch:
        batches.append(batch)
    return batches
