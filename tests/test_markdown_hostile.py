"""Hostile Markdown parses in linear time: unclosed comments and shortcodes cannot stall ingest."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.errors import RunbookFormatError
from rag.formats.markdown import parse_runbook
from rag.formats.noise import strip_noise

MB = 1_000_000
# The quadratic regex took 4.8 s for 112 KB of unclosed `<!--`, so minutes for 1 MB (the
# default file cap). Linear stripping of 1 MB takes a fraction of a second and the whole parse
# (markdown-it included) about a second; the bounds leave room for a loaded 2-core machine and
# stay far below the quadratic time.
STRIP_SECONDS_PER_MB = 3.0
PARSE_SECONDS_PER_MB = 20.0

_PIECES = ["<!--", "{{<", "{{%", "`", "``", "[[_TOC_]]", "-->", ">}}", "%}}", "x ", "\n"]


def _parse_seconds(text: str) -> float:
    started = time.perf_counter()
    try:
        parse_runbook(text, fallback_title="hostile")
    except RunbookFormatError:
        pass  # rejecting the file is fine; taking minutes to do it is not
    return time.perf_counter() - started


@pytest.mark.slow  # parses 1 MB (the default file cap) per case
@pytest.mark.parametrize("opener", ["<!--", "{{<"])
@pytest.mark.parametrize("separator", [" ", "\n"])
def test_a_megabyte_of_one_unclosed_opener_is_stripped_and_parsed_within_the_bound(
    opener: str, separator: str
) -> None:
    unit = opener + separator
    text = "# Hostile\n\nSome text.\n\n" + unit * (MB // len(unit))
    started = time.perf_counter()
    assert strip_noise(text) == text
    assert time.perf_counter() - started < STRIP_SECONDS_PER_MB
    assert _parse_seconds(text) < PARSE_SECONDS_PER_MB


@settings(
    database=None,
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    pattern=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8),
    size=st.sampled_from([10_000, 100_000, 500_000]),
)
def test_stripping_time_grows_linearly_with_hostile_input(pattern: list[str], size: int) -> None:
    unit = "".join(pattern)
    text = unit * (size // len(unit) + 1)
    started = time.perf_counter()
    strip_noise(text)
    assert time.perf_counter() - started < STRIP_SECONDS_PER_MB * size / MB + 0.2, pattern


@given(st.text(alphabet="<!-{}%`>[_TOC]\n x", max_size=200))
@settings(database=None, max_examples=300)
def test_stripping_never_grows_the_text(text: str) -> None:
    assert len(strip_noise(text)) <= len(text)
