from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from bot.slack.blocks import (
    Card,
    escape_mrkdwn,
    render_answer,
    render_error,
    render_internal_error,
    render_no_evidence,
    render_not_connected,
    render_result,
    render_searching,
    render_usage,
)
from rag.answering.answers import AskResult, Citation
from rag.retrieval.evidence import Evidence

ANSWER_ID = "7d5c1f1e-5b8e-4f0e-9d5e-2f4a3c1b0a99"
MENTIONS = ("<!channel>", "<!here>", "<@U123>", "<#C123>", "<!subteam^S1>", "<http://evil|click>")


def evidence(
    n: int = 1,
    *,
    document_id: str | None = None,
    title: str = "Database failover",
    headings: tuple[str, ...] = ("Database failover", "Promote the replica"),
    url: str | None = "https://wiki.example.com/runbooks/db-failover",
    owner: str | None = "team-db",
    updated: str | None = "2026-05-02",
) -> Evidence:
    return Evidence(
        chunk_id=100 + n,
        document_id=document_id or f"runbooks/doc-{n}",
        version=1,
        title=title,
        heading_path=headings,
        content="Promote the standby with pg_ctl promote.",
        url=url,
        owner=owner,
        updated=updated,
        service="db",
        cosine=0.8,
        vector_rank=n,
        keyword_rank=n,
        score=1 / n,
    )


def result(
    status: str = "answered",
    *,
    answer: str = "Promote the standby [1], then repoint the app [2].",
    citations: tuple[Citation, ...] | None = None,
    found: tuple[Evidence, ...] = (),
    reason_code: str | None = None,
    provider: str = "extractive",
    retryable: bool = False,
    tenant: str = "acme",
    service: str | None = None,
    fallback_reason: str | None = None,
    answer_id: str | None = ANSWER_ID,
) -> AskResult:
    if citations is None:
        citations = (
            (
                Citation(1, "pg_ctl promote", evidence(1)),
                Citation(2, "update DATABASE_HOST", evidence(2, title="App config", headings=())),
            )
            if status == "answered"
            else ()
        )
    return AskResult(
        status=status,  # type: ignore[arg-type]
        reason_code=reason_code,
        answer=answer,
        citations=citations,
        evidence=found,
        provider=provider,
        timings_ms={},
        retryable=retryable,
        tenant=tenant,
        service=service,
        fallback_reason=fallback_reason,
        answer_id=answer_id,
    )


def walk(blocks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every block, container children included."""
    for block in blocks:
        yield block
        yield from walk(block.get("child_blocks", []))


def of_type(card: Card, kind: str) -> list[dict[str, Any]]:
    return [block for block in walk(card.blocks) if block["type"] == kind]


def mrkdwn_texts(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        if value.get("type") == "mrkdwn":
            yield value["text"]
        for item in value.values():
            yield from mrkdwn_texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from mrkdwn_texts(item)


def shown(card: Card) -> str:
    """What mrkdwn shows, in one string."""
    return "\n".join(mrkdwn_texts(card.blocks))


def rich_texts(block: dict[str, Any]) -> list[str]:
    return [
        part["text"]
        for element in block["elements"]
        if element["type"] == "rich_text_quote"
        for part in element["elements"]
    ]


def buttons(card: Card) -> dict[str, dict[str, Any]]:
    return {
        element["action_id"]: element
        for block in of_type(card, "actions")
        for element in block["elements"]
    }


def sections(card: Card) -> list[str]:
    return [block["text"]["text"] for block in of_type(card, "section")]


def test_answer_card_shows_the_answer_with_its_markers() -> None:
    card = render_answer(result())
    assert sections(card)[0] == "Promote the standby [1], then repoint the app [2]."
    assert card.text.startswith("Promote the standby [1]")


def test_one_source_line_per_citation_number() -> None:
    citations = (
        Citation(1, "pg_ctl promote", evidence(1)),
        Citation(1, "wait for the replica", evidence(1)),
        Citation(2, "update DATABASE_HOST", evidence(2, title="App config", headings=())),
    )
    text = shown(render_answer(result(citations=citations)))
    assert text.count("*[1]*") == 1
    assert text.count("*[2]*") == 1
    assert "Database failover › Promote the replica" in text
    assert "|App config> ·" in text
    assert re.search(r"owner team-db · updated (\d+ days? ago|today)", text)


@pytest.mark.parametrize(
    ("url", "linked"),
    [
        ("https://wiki.example.com/db", True),
        ("http://wiki.example.com/db", True),
        ("HTTPS://WIKI.EXAMPLE.COM/db", True),
        ("javascript:alert(1)", False),
        ("ftp://files.example.com/db", False),
        ("file:///etc/passwd", False),
        ("https://x.example.com|Click here", False),
        ("https://x.example.com/a b", False),
        ("https://x.example.com/<!channel>", False),
        ("https://", False),
        ("https://" + "a" * 400 + ".example.com", False),
        (None, False),
    ],
)
def test_source_is_linked_only_for_a_plain_http_url(url: str | None, linked: bool) -> None:
    citations = (Citation(1, "pg_ctl promote", evidence(1, url=url)),)
    text = shown(render_answer(result(citations=citations)))
    label = "Database failover › Promote the replica"
    assert (f"<{url}|{label}>" in text) is linked
    assert label in text
    assert re.search(r"<(?!https?://)", text, re.IGNORECASE) is None


def test_link_escapes_ampersands_in_the_url_and_the_label() -> None:
    url = "https://wiki.example.com/view?page=db&section=2"
    citations = (Citation(1, "q", evidence(1, url=url, title="R&D <b>", headings=())),)
    text = shown(render_answer(result(citations=citations)))
    assert "<https://wiki.example.com/view?page=db&amp;section=2|R&amp;D &lt;b&gt;>" in text


def test_each_citation_has_a_collapsed_container_with_its_quotes_in_rich_text() -> None:
    citations = (
        Citation(1, "pg_ctl promote <!channel>", evidence(1)),
        Citation(1, "wait for the replica", evidence(1)),
        Citation(2, "update DATABASE_HOST", evidence(2, title="App config", headings=())),
    )
    containers = of_type(render_answer(result(citations=citations)), "container")
    assert [c["title"]["text"] for c in containers] == [
        "[1] Database failover › Promote the replica",
        "[2] App config",
    ]
    assert all(c["is_collapsible"] and c["default_collapsed"] for c in containers)
    first, second = (c["child_blocks"] for c in containers)
    assert [b["type"] for b in first] == ["rich_text"]
    assert rich_texts(first[0]) == ["pg_ctl promote <!channel>", "wait for the replica"]
    assert rich_texts(second[0]) == ["update DATABASE_HOST"]


def test_show_quote_buttons_carry_only_the_answer_id() -> None:
    card = render_answer(result())
    assert {k: v["value"] for k, v in buttons(card).items()} == {
        "show_quote:1": ANSWER_ID,
        "show_quote:2": ANSWER_ID,
    }
    assert buttons(card)["show_quote:1"]["text"]["text"] == "Show quote [1]"


def test_expanded_citation_shows_its_quote_inline_and_a_hide_button() -> None:
    card = render_answer(result(), expanded=frozenset({1}))
    assert [c["title"]["text"] for c in of_type(card, "container")] == ["[2] App config"]
    inline = [b for b in card.blocks if b["type"] == "rich_text"]
    assert len(inline) == 1
    assert rich_texts(inline[0]) == ["pg_ctl promote"]
    assert set(buttons(card)) == {"hide_quote:1", "show_quote:2"}
    assert buttons(card)["hide_quote:1"]["text"]["text"] == "Hide quote [1]"


def test_ephemeral_answer_offers_share_in_channel() -> None:
    assert "share_answer" not in buttons(render_answer(result()))
    share = buttons(render_answer(result(), ephemeral=True))["share_answer"]
    assert share["value"] == ANSWER_ID
    assert share["text"]["text"] == "Share in channel"


def test_feedback_buttons_carry_the_answer_id_and_a_direction() -> None:
    (block,) = of_type(render_answer(result()), "context_actions")
    (feedback,) = block["elements"]
    assert feedback["type"] == "feedback_buttons"
    assert feedback["action_id"] == "feedback"
    assert feedback["positive_button"]["value"] == f"{ANSWER_ID}:up"
    assert feedback["negative_button"]["value"] == f"{ANSWER_ID}:down"


def test_answer_without_an_id_has_no_buttons_that_could_not_be_handled() -> None:
    card = render_answer(result(answer_id=None), ephemeral=True)
    assert buttons(card) == {}
    assert of_type(card, "context_actions") == []
    assert len(of_type(card, "container")) == 2


def test_footer_names_the_tenant_and_marks_model_text_as_ai_generated() -> None:
    footer = render_answer(result(provider="claude", service="db")).blocks[-1]
    texts = [element["text"] for element in footer["elements"]]
    assert texts == [
        "Searched the *acme* runbooks for service *db*.",
        "AI-generated, check the sources",
    ]
    extractive = render_answer(result(provider="extractive")).blocks[-1]
    assert [e["text"] for e in extractive["elements"]] == [
        "Searched the *acme* runbooks.",
        "Quoted verbatim from runbooks",
    ]


@pytest.mark.parametrize(
    ("fallback_reason", "words"),
    [
        ("filtered_no_evidence", "nothing matched service *db*, so all services were searched"),
        ("filtered_low_quality", "matches for service *db* were weak, so all services"),
        ("something_new", "the search was widened beyond service *db*"),
    ],
)
def test_widened_search_is_explained_in_plain_words(fallback_reason: str, words: str) -> None:
    card = render_answer(result(service="db", fallback_reason=fallback_reason))
    assert words in shown(card)
    assert fallback_reason not in shown(card)


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("no_evidence", "No runbook matched this question."),
        ("low_confidence", "none closely enough to answer from"),
        ("not_in_sources", "they don't answer this"),
        ("unverifiable_citations", "could not be verified word for word"),
        ("brand_new_reason", "No runbook passage qualified as evidence"),
    ],
)
def test_no_evidence_card_explains_each_reason_in_plain_words(reason: str, words: str) -> None:
    card = render_no_evidence(result("abstained", answer="", reason_code=reason))
    assert card.blocks[0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "No runbook evidence", "emoji": True},
    }
    text = shown(card)
    assert words in text
    assert reason not in text
    assert "Searched the *acme* runbooks." in text
    assert "alert name or the service" in text
    assert "Page the team that owns the service" in text
    assert "add one" in text
    assert card.text.startswith("No runbook evidence: ")


@pytest.mark.parametrize(
    ("reason", "lists_nearest"),
    [
        ("no_evidence", False),
        ("low_confidence", True),
        ("not_in_sources", True),
        ("unverifiable_citations", True),
        ("brand_new_reason", False),
    ],
)
def test_nearest_runbooks_are_the_top_three_documents_of_this_result(
    reason: str, lists_nearest: bool
) -> None:
    found = (
        evidence(1, document_id="acme/db", title="DB failover", headings=()),
        evidence(2, document_id="acme/db", title="DB failover", headings=()),
        evidence(3, document_id="acme/cache", title="Cache flush", headings=(), url=None),
        evidence(4, document_id="acme/dns", title="DNS outage", headings=()),
        evidence(5, document_id="acme/cdn", title="CDN purge", headings=()),
    )
    text = shown(render_no_evidence(result("abstained", reason_code=reason, found=found)))
    assert ("Closest runbooks" in text) is lists_nearest
    if lists_nearest:
        assert text.count("DB failover") == 1
        assert "• Cache flush · owner team-db" in text
        assert "<https://wiki.example.com/runbooks/db-failover|DNS outage>" in text
        assert "CDN purge" not in text


ERROR_CODES = [
    "answer_provider_timeout",
    "answer_provider_unavailable",
    "answer_provider_rate_limited",
    "answer_provider_authentication_failed",
    "answer_provider_request_rejected",
    "answer_provider_invalid_response",
    "answer_provider_empty_response",
    "answer_provider_ungrounded_response",
    "embedding_failed",
    "embedding_model_files_invalid",
    "embedding_model_mismatch",
    "store_unavailable",
    "configuration_invalid",
    "never_seen_before",
]


@pytest.mark.parametrize("code", ERROR_CODES)
@pytest.mark.parametrize("retryable", [True, False])
def test_error_card_words_each_code_without_exception_text(code: str, retryable: bool) -> None:
    leaked = "tenant 'acme' was ingested with model-x; HTTP 529 overloaded_error <!channel>"
    card = render_error(
        result("error", answer=leaked, reason_code=code, retryable=retryable, provider="claude")
    )
    text = card.text + shown(card)
    assert code not in text
    assert "model-x" not in text and "529" not in text and "channel" not in text
    assert sections(card)[0]
    assert ("retry_answer" in buttons(card)) is retryable
    if retryable:
        assert buttons(card)["retry_answer"]["value"] == ANSWER_ID
        assert "Try again" in sections(card)[0]


def test_error_messages_differ_per_code() -> None:
    messages = {
        code: sections(render_error(result("error", reason_code=code)))[0] for code in ERROR_CODES
    }
    assert len(set(messages.values())) == len(ERROR_CODES)


def test_question_invalid_shows_the_core_message_escaped() -> None:
    message = "the question is 9000 characters; the limit is 2000 <!here>."
    card = render_error(result("error", answer=message, reason_code="question_invalid"))
    assert sections(card)[0] == (
        "That question can't be searched: the question is 9000 characters; "
        "the limit is 2000 &lt;!here&gt;."
    )
    assert buttons(card) == {}


def test_error_card_still_lists_the_runbooks_found() -> None:
    found = (evidence(1, title="DB failover", headings=()), evidence(2, title="App config"))
    card = render_error(
        result("error", reason_code="answer_provider_timeout", retryable=True, found=found)
    )
    text = shown(card)
    assert "Runbooks found before the error" in text
    assert "DB failover" in text and "App config" in text
    assert "Searched the *acme* runbooks." in text


def test_not_connected_card_names_the_workspace_and_how_to_connect_it() -> None:
    card = render_not_connected(team_id="T0123ABCD", enterprise_id=None)
    text = shown(card)
    assert card.text == "This Slack workspace (T0123ABCD) is not connected to runbook-bot."
    assert "runbook workspace add T0123ABCD TENANT" in text
    assert "install link" in text
    grid = shown(render_not_connected(team_id="T0123ABCD", enterprise_id="E0456"))
    assert "runbook workspace add T0123ABCD TENANT --enterprise E0456" in grid
    unknown = shown(render_not_connected(team_id=None, enterprise_id="E0456"))
    assert "runbook workspace add TEAM_ID TENANT --enterprise E0456" in unknown


def test_usage_card_lists_every_entry_point_with_examples() -> None:
    card = render_usage()
    text = shown(card)
    assert "`/runbook &lt;question&gt;`" in text
    assert "@runbook-bot" in text
    assert "*Ask runbooks*" in text
    assert "Examples" in text
    assert card.text == "Ask runbook-bot: /runbook &lt;question&gt;"


def test_fixed_cards_have_text_and_no_details() -> None:
    for card in (render_internal_error(), render_searching()):
        assert card.text
        assert len(card.blocks) == 1
    assert "Try again" in render_internal_error().text


def test_render_result_dispatches_on_status_and_restates_the_question() -> None:
    answered = render_result(result(), question="how do I fail over <!channel>?")
    assert answered.blocks[0]["elements"][0]["text"] == (
        "*You asked:* how do I fail over &lt;!channel&gt;?"
    )
    abstained = render_result(result("abstained", reason_code="no_evidence"), question="q")
    assert [b["type"] for b in abstained.blocks[:2]] == ["header", "context"]
    errored = render_result(result("error", reason_code="store_unavailable"))
    assert errored == render_error(result("error", reason_code="store_unavailable"))
    assert render_result(result(), expanded=frozenset({2}), ephemeral=True) == render_answer(
        result(), expanded=frozenset({2}), ephemeral=True
    )


def test_twenty_citations_stay_within_slack_limits() -> None:
    citations = tuple(
        Citation(n, f"quote {n} " + "x" * 900, evidence(n, title=f"Runbook {n}"))
        for n in range(1, 21)
    )
    card = render_answer(result(citations=citations, answer="a " * 3000), ephemeral=True)
    assert len(card.blocks) <= 50
    assert all(len(b["elements"]) <= 25 for b in of_type(card, "actions"))
    assert "+14 more sources" in shown(card)
    assert len(of_type(card, "container")) == 6
    assert_valid(card)


def test_a_40000_character_answer_is_cut_visibly_into_sections() -> None:
    card = render_answer(result(answer="Restart the pod. " * 2400))
    answer_sections = [s for s in sections(card) if s.startswith("Restart")]
    assert len(answer_sections) >= 2
    assert all(len(s) <= 3000 for s in sections(card))
    assert answer_sections[-1].endswith("…")
    assert "Answer shortened to fit in Slack" in shown(card)
    assert len(card.text) <= 700
    assert_valid(card)


def test_escaping_neutralises_every_mention_form() -> None:
    for mention in MENTIONS:
        assert "<" not in escape_mrkdwn(mention) and ">" not in escape_mrkdwn(mention)
    assert escape_mrkdwn("a & b <c>") == "a &amp; b &lt;c&gt;"
    hostile = " ".join(MENTIONS)
    citations = (Citation(1, hostile, evidence(1, title=hostile, owner=hostile, updated=hostile)),)
    card = render_answer(result(answer=hostile, citations=citations, tenant=hostile))
    assert "<!" not in card.text + shown(card)
    assert "<@" not in card.text + shown(card)
    assert "<#" not in card.text + shown(card)
    assert "<http://evil" not in card.text + shown(card)


def test_worst_case_inputs_stay_under_the_message_budget() -> None:
    # "&" grows five-fold when escaped; every field at its worst at once.
    worst = "&" * 5000
    url = "https://wiki.example.com/" + "a" * 270
    citations = tuple(
        Citation(n, worst, evidence(n, title=worst, headings=(worst,) * 5, url=url, owner=worst))
        for n in range(1, 30)
    )
    card = render_result(
        result(answer=worst * 8, citations=citations, tenant=worst, service=worst),
        expanded=frozenset(range(1, 5)),
        ephemeral=True,
        question=worst,
    )
    assert_valid(card)


def assert_valid(card: Card) -> None:
    """Slack's limits, checked independently of the renderer, and slack_sdk's validation."""
    assert card.text
    assert len(card.blocks) <= 50
    for block in card.blocks:
        parsed = Block.parse(block)
        assert parsed is not None
        assert parsed.to_dict() == block  # to_dict validates; equality: no key was dropped
    for block in walk(card.blocks):
        if block["type"] == "section":
            assert 1 <= utf16(block["text"]["text"]) <= 3000
        if block["type"] == "header":
            assert utf16(block["text"]["text"]) <= 150
        if block["type"] == "container":
            assert utf16(block["title"]["text"]) <= 150
            assert len(block["child_blocks"]) <= 10
        if block["type"] == "context":
            assert len(block["elements"]) <= 10
        if block["type"] == "actions":
            assert len(block["elements"]) <= 25
            for element in block["elements"]:
                assert len(element["action_id"]) <= 255
                if element["type"] == "static_select":
                    assert 1 <= len(element["options"]) <= 100
                    for option in element["options"]:
                        assert utf16(option["text"]["text"]) <= 75
                        assert len(option["value"]) <= 150
                    continue
                assert utf16(element["text"]["text"]) <= 75
                assert len(element["value"]) <= 2000
    assert all(obj.get("verbatim") is True for obj in objects_of_type(card.blocks, "mrkdwn"))
    assert text_total(card.blocks) <= 10_000
    assert len(json.dumps(card.blocks, ensure_ascii=False)) <= 40_000


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def objects_of_type(value: object, kind: str) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if value.get("type") == kind:
            yield value
        for item in value.values():
            yield from objects_of_type(item, kind)
    elif isinstance(value, list):
        for item in value:
            yield from objects_of_type(item, kind)


def text_total(value: object) -> int:
    if isinstance(value, dict):
        return sum(
            utf16(item) if key == "text" and isinstance(item, str) else text_total(item)
            for key, item in value.items()
        )
    if isinstance(value, list):
        return sum(text_total(item) for item in value)
    return 0
