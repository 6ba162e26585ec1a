"""Teams cards as pure functions: valid Adaptive Cards 1.5 for every outcome, verbatim quotes
behind toggles, neutralised markup, and the 28 KB activity limit met by visible truncation."""

from __future__ import annotations

import json

import pytest

from bot.core.answers.outcome_text import ABSTENTION_REASONS
from bot.teams.cards import (
    MAX_ACTIVITY_BYTES,
    card_bytes,
    render_answer_gone,
    render_help,
    render_internal_error,
    render_not_connected,
    render_question_dialog,
    render_result,
    render_searching,
    render_store_unavailable,
)
from rag import Citation
from tests.adaptive_cards import AT_TAG, activity_problems, card_problems, rendered_texts
from tests.test_blocks import ANSWER_ID, evidence, result

HOSTILE = "<at>Everyone</at> <AT id='0'>x</AT> [click](javascript:alert(1)) **bold** <script>"


def as_activity(card: dict[str, object]) -> dict[str, object]:
    return {
        "type": "message",
        "attachments": [
            {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}
        ],
    }


def test_every_card_is_a_valid_adaptive_card_1_5() -> None:
    cards = [
        render_result(result()),
        render_result(result(), vote="up"),
        *(
            render_result(result("abstained", reason_code=r, found=(evidence(1),)))
            for r in ABSTENTION_REASONS
        ),
        render_result(result("abstained", reason_code="something_new")),
        render_result(result("error", reason_code="answer_provider_timeout", retryable=True)),
        render_result(result("error", reason_code="question_invalid", answer="too long")),
        render_help(),
        render_not_connected("5c0ffee0-aaaa-4bbb-8ccc-0123456789ab"),
        render_searching(),
        render_internal_error(),
        render_store_unavailable(),
        render_answer_gone(),
        render_question_dialog("KubePodCrashLooping payments", max_chars=2000)["task"]["value"][
            "card"
        ]["content"],
    ]
    for card in cards:
        assert card_problems(card) == []
        assert activity_problems(as_activity(card), card_bytes(card)) == []


def test_answer_card_hides_each_verified_quote_behind_its_toggle() -> None:
    card = render_result(result())
    toggles = [a for e in card["body"] if e["type"] == "ActionSet" for a in e["actions"]]
    assert [t["title"] for t in toggles] == ["Show quote [1]", "Show quote [2]"]
    containers = {e["id"]: e for e in card["body"] if e["type"] == "Container"}
    for toggle, quote in zip(toggles, ["pg_ctl promote", "update DATABASE_HOST"], strict=True):
        [target] = toggle["targetElements"]
        assert containers[target]["isVisible"] is False
        assert containers[target]["items"][1]["inlines"] == [{"type": "TextRun", "text": quote}]
    assert "[1]" in card["body"][0]["inlines"][0]["text"]
    votes = [a["data"]["vote"] for a in card["actions"]]
    assert votes == ["up", "down"] and all(a["verb"] == "feedback" for a in card["actions"])


def test_a_vote_replaces_the_buttons_with_its_acknowledgement() -> None:
    card = render_result(result(), vote="down")
    assert "actions" not in card
    assert any("not helpful" in t for t in rendered_texts(card))


@pytest.mark.parametrize("reason", [*ABSTENTION_REASONS, None])
def test_every_abstention_says_no_runbook_evidence_and_lists_the_nearest_runbooks(
    reason: str | None,
) -> None:
    found = (evidence(1), evidence(2, document_id="runbooks/doc-1"), evidence(3))
    card = render_result(result("abstained", reason_code=reason, found=found))
    shown = rendered_texts(card)
    assert card["body"][0]["text"] == "No runbook evidence"
    assert "Action.ToggleVisibility" not in json.dumps(card)
    labels = [t for t in shown if t.startswith("Database failover")]
    assert len(labels) == 2, "one line per distinct runbook"


def test_provider_error_card_offers_retry_and_never_the_error_text() -> None:
    error = result(
        "error", reason_code="answer_provider_timeout", retryable=True, answer="Traceback …"
    )
    card = render_result(error)
    [retry] = card["actions"]
    assert (retry["verb"], retry["data"], retry["fallback"]["type"]) == (
        "retry",
        {"answer_id": ANSWER_ID},
        "Action.Submit",
    )
    assert "Traceback" not in json.dumps(card)


def test_markup_and_mention_tags_in_runbook_and_model_text_are_neutralised() -> None:
    hostile = evidence(
        1, title=HOSTILE, headings=(HOSTILE,), owner=HOSTILE, url="javascript:alert(1)"
    )
    card = render_result(
        result(answer=f"{HOSTILE} do this [1]", citations=(Citation(1, HOSTILE, hostile),))
    )
    assert not any(AT_TAG.search(t) for t in rendered_texts(card))
    assert "selectAction" not in json.dumps(card), "no link from an unsafe URL"
    for element in card["body"]:
        if element["type"] == "TextBlock":  # Markdown is rendered: only our own wording
            assert "click" not in element["text"]
    assert activity_problems(as_activity(card), card_bytes(card)) == []


def test_a_huge_answer_fits_the_activity_limit_with_visible_truncation() -> None:
    long_quote = "step " * 4000
    citations = tuple(
        Citation(n, long_quote + str(n), evidence(n, title="T" * 300)) for n in range(1, 10)
    )
    card = render_result(result(answer="word " * 20_000 + "[1]", citations=citations))
    assert card_bytes(card) + 2_500 <= MAX_ACTIVITY_BYTES
    assert card_problems(card) == []
    shown = rendered_texts(card)
    assert any(t.endswith("…") for t in shown)
    assert any("Answer shortened" in t for t in shown)
    assert any("+3 more sources" in t for t in shown)


def test_not_connected_card_names_the_command_and_has_no_citations() -> None:
    card = render_not_connected("5c0ffee0-aaaa-4bbb-8ccc-0123456789ab")
    shown = " ".join(rendered_texts(card))
    assert "not connected" in shown
    assert "runbook teams tenant add 5c0ffee0-aaaa-4bbb-8ccc-0123456789ab TENANT" in shown
    assert "actions" not in card and "[1]" not in shown
