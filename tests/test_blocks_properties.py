"""Over arbitrary runbook, answer and alert text: no live mention or link, no rejected message."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.slack.blocks import (
    Card,
    render_no_evidence,
    render_not_connected,
    render_result,
)
from bot.slack.blocks.text import ELLIPSIS, clean, clip, split_chunks
from rag.answering.answers import AskResult, Citation
from rag.retrieval.evidence import Evidence
from tests.test_blocks import assert_valid, evidence, mrkdwn_texts, objects_of_type, result, utf16

HOSTILE = [
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<@U123>",
    "<#C1>",
    "<!subteam^S1>",
    "<https://x|y>",
    "<http://evil|click>",
    "<mailto:a@b.c|mail>",
    "&",
    "&amp;",
    "&lt;!channel&gt;",
    "<",
    ">",
    "|",
    "*",
    "`",
    "```",
    "\n",
    "\x00",
    "\x1b[31m",
    "\u202e",
    "\u200f",
    "שלום עולם",
    "مرحبا",
    "👩‍👩‍👧",
    "🔥",
]
# Arbitrary text (control characters, RTL, emoji included) spliced with mention syntax;
# sometimes repeated far past every Slack limit.
fragment = st.one_of(st.text(max_size=30), st.sampled_from(HOSTILE))
untrusted = st.lists(fragment, max_size=8).map("".join)
untrusted_long = st.one_of(
    untrusted, st.tuples(untrusted, st.integers(2, 80)).map(lambda t: t[0] * t[1])
)
urls = st.one_of(
    st.none(),
    untrusted,
    untrusted.map(lambda s: "https://wiki.example.com/" + s),
    st.sampled_from(
        [
            "https://wiki.example.com/db?a=1&b=2",
            "http://x.example.com|<!channel>",
            "javascript:alert(1)",
            "https://[::1",
        ]
    ),
)
LIVE_LINK = re.compile(r"<(https?://[^\s<>|]+)\|[^<>]*>", re.IGNORECASE)


@st.composite
def evidences(draw: st.DrawFn) -> Evidence:
    return evidence(
        draw(st.integers(1, 40)),
        document_id=draw(st.sampled_from(["a", "b", "c", "d", "e"])),
        title=draw(untrusted_long),
        headings=tuple(draw(st.lists(untrusted, max_size=3))),
        url=draw(urls),
        owner=draw(st.none() | untrusted_long),
        updated=draw(st.none() | untrusted),
    )


@st.composite
def results(draw: st.DrawFn, status: str) -> AskResult:
    reasons = {
        "answered": st.none(),
        "abstained": st.sampled_from(
            ["no_evidence", "low_confidence", "not_in_sources", "unverifiable_citations"]
        )
        | untrusted,
        "error": st.sampled_from(
            ["question_invalid", "answer_provider_timeout", "store_unavailable"]
        )
        | untrusted,
    }[status]
    # Up to 9 distinct numbers: past the renderer's cap of shown sources.
    citations = st.builds(Citation, st.integers(1, 9), untrusted_long, evidences())
    return result(
        status,
        answer=draw(untrusted_long),
        citations=tuple(draw(st.lists(citations, min_size=1, max_size=10)))
        if status == "answered"
        else (),
        found=tuple(draw(st.lists(evidences(), max_size=6))),
        reason_code=draw(reasons),
        provider=draw(st.sampled_from(["claude", "extractive", "none"]) | untrusted),
        retryable=draw(st.booleans()),
        tenant=draw(untrusted_long),
        service=draw(st.none() | untrusted_long),
        fallback_reason=draw(
            st.none()
            | st.sampled_from(["filtered_no_evidence", "filtered_low_quality"])
            | untrusted
        ),
        answer_id=draw(st.none() | st.uuids().map(str) | st.text(max_size=2100)),
    )


def assert_no_live_syntax(card: Card, trusted_urls: set[str]) -> None:
    """Only links the renderer built from runbook URLs may open a ``<``; nothing else can."""
    for text in [card.text, *mrkdwn_texts(card.blocks)]:
        for url in LIVE_LINK.findall(text):
            assert url.replace("&amp;", "&") in trusted_urls
        rest = LIVE_LINK.sub("", text)
        assert "<" not in rest and ">" not in rest, text
        for opener in ("<!", "<@", "<#"):
            assert opener not in text


def all_urls(result: AskResult) -> set[str]:
    everything = [c.evidence for c in result.citations] + list(result.evidence)
    return {e.url for e in everything if e.url}


def assert_quotes_verbatim_or_visibly_cut(card: Card, result: AskResult) -> None:
    quotes = {clean(c.quote).strip() for c in result.citations}
    for element in objects_of_type(card.blocks, "rich_text_quote"):
        (part,) = element["elements"]
        shown = part["text"]
        assert (
            shown == "(empty quote)"
            or shown in quotes
            or (shown.endswith(ELLIPSIS) and any(q.startswith(shown[:-1]) for q in quotes))
        )


@settings(max_examples=200, deadline=None)
@given(
    result=results("answered"),
    expanded=st.frozensets(st.integers(0, 31), max_size=6),
    ephemeral=st.booleans(),
    question=st.none() | untrusted_long,
)
def test_answer_cards_carry_no_live_mention_and_stay_within_limits(
    result: AskResult, expanded: frozenset[int], ephemeral: bool, question: str | None
) -> None:
    card = render_result(result, expanded=expanded, ephemeral=ephemeral, question=question)
    assert_no_live_syntax(card, all_urls(result))
    assert_valid(card)
    assert_quotes_verbatim_or_visibly_cut(card, result)


@settings(max_examples=200, deadline=None)
@given(
    result=st.one_of(results("abstained"), results("error")),
    question=st.none() | untrusted_long,
)
def test_no_evidence_and_error_cards_carry_no_live_mention_and_stay_within_limits(
    result: AskResult, question: str | None
) -> None:
    card = render_result(result, question=question)
    assert_no_live_syntax(card, all_urls(result))
    assert_valid(card)


@settings(max_examples=200, deadline=None)
@given(result=results("abstained"))
def test_nearest_runbooks_come_only_from_the_results_own_evidence(result: AskResult) -> None:
    card = render_no_evidence(result)
    linked = {url for text in mrkdwn_texts(card.blocks) for url in LIVE_LINK.findall(text)}
    assert {url.replace("&amp;", "&") for url in linked} <= {e.url for e in result.evidence}


@settings(max_examples=200, deadline=None)
@given(team_id=st.none() | untrusted_long, enterprise_id=st.none() | untrusted_long)
def test_not_connected_card_is_safe_for_any_ids(
    team_id: str | None, enterprise_id: str | None
) -> None:
    card = render_not_connected(team_id=team_id, enterprise_id=enterprise_id)
    assert_no_live_syntax(card, set())
    assert_valid(card)


@settings(max_examples=200, deadline=None)
@given(text=untrusted_long, limit=st.integers(3, 3000))
def test_clip_stays_within_the_limit_and_marks_every_cut(text: str, limit: int) -> None:
    clipped = clip(text, limit)
    assert utf16(clipped) <= limit
    assert clipped == text or clipped.endswith(ELLIPSIS)


@settings(max_examples=200, deadline=None)
@given(text=untrusted_long.map(lambda s: s.replace("&", "&amp;")), size=st.integers(10, 3000))
def test_split_pieces_fit_and_never_cut_an_entity(text: str, size: int) -> None:
    pieces = split_chunks(text, size)
    assert all(1 <= utf16(piece) <= size for piece in pieces)
    for piece in pieces:
        assert re.search(r"&(?!amp;)", piece) is None
    assert "".join("".join(p.split()) for p in pieces) == "".join(text.split())
