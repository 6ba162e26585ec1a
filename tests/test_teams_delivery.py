"""The connector retry policy's arithmetic: Retry-After in both forms, and backoff with jitter."""

from __future__ import annotations

import time
from email.utils import formatdate

from bot.teams.delivery import BACKOFF_BASE_S, BACKOFF_MAX_S, backoff_s, retry_after_s


def test_retry_after_is_read_as_seconds_or_an_http_date() -> None:
    assert retry_after_s({"Retry-After": "2"}) == 2.0
    in_three = retry_after_s({"Retry-After": formatdate(time.time() + 3, usegmt=True)})
    assert in_three is not None and 1.5 < in_three <= 3.0
    assert retry_after_s({"Retry-After": formatdate(time.time() - 60, usegmt=True)}) == 0.0
    assert retry_after_s({"Retry-After": "soon"}) is None
    assert retry_after_s({}) is None


def test_backoff_doubles_up_to_a_cap_with_jitter_below_it() -> None:
    for attempt in range(1, 10):
        ceiling = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** (attempt - 1))
        delays = {backoff_s(attempt) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1, "jittered, so throttled callers spread out"
