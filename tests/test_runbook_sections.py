"""A cited runbook's sections: rebuilt verbatim from overlapping chunks, cut only between
paragraphs, code blocks whole and labelled, and offered on both cards within their limits."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from bot.core.answers.runbook_parts import section_parts, shown_section
from bot.core.answers.section_choice import parse_choice
from bot.slack.blocks import render_result as render_slack
from bot.teams.cards import render_result as render_teams
from bot.teams.cards.elements import fits
from rag import CHANGES_STATE, MAX_SECTIONS, RunbookSection, RunbookView, gold_in_card
from rag.answering.runbook_sections import SectionChunk, sections_of
from rag.formats.markdown import parse_runbook
from rag.ingest.chunking import chunk_runbook
from tests.adaptive_cards import card_problems
from tests.test_blocks import ANSWER_ID, assert_valid, buttons, result
from tests.test_teams_sections import section_buttons

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
FAILOVER = """Check who leads first:

```bash
patronictl -c /etc/patroni.yml list
```

Then fail over to the replica:

```bash
patronictl -c /etc/patroni.yml failover --candidate pg-2 --force
```

Watch the lag."""


def rebuilt(path: Path, *, max_chars: int, overlap_chars: int) -> list[RunbookSection]:
    runbook = parse_runbook(path.read_text(encoding="utf-8"), fallback_title=path.stem)
    drafts = chunk_runbook(runbook, max_chars=max_chars, overlap_chars=overlap_chars)
    chunks = [SectionChunk(i, list(d.heading_path), d.content) for i, d in enumerate(drafts)]
    return sections_of(chunks, title=runbook.title)


def view(sections: int, *, text: str = FAILOVER, best: int = 0) -> RunbookView:
    return RunbookView(
        document_id="runbooks/doc-1",
        title="Database failover",
        url="https://wiki.example.com/runbooks/db-failover",
        sections=tuple(
            RunbookSection(f"Step {i}", text, (f"Step {i}", f"Detail {i}")) for i in range(sections)
        ),
        best=best,
    )


def test_sections_rebuilt_from_overlapping_chunks_read_as_the_runbook_does() -> None:
    for path in (
        CORPUS / "acme/payments/gateway-5xx.md",
        CORPUS / "acme/database/primary-failover.md",
    ):
        whole = rebuilt(path, max_chars=100_000, overlap_chars=0)
        chunked = rebuilt(path, max_chars=1500, overlap_chars=150)
        assert [s.heading for s in chunked] == [s.heading for s in whole]
        assert [s.text.split() for s in chunked] == [s.text.split() for s in whole]
        assert "Impact" in [s.heading for s in whole]


def test_code_blocks_stay_whole_and_state_changing_ones_are_labelled() -> None:
    parts = section_parts(FAILOVER)
    assert [p.code for p in parts] == [False, True, False, True, False]
    assert parts[3].text == "patronictl -c /etc/patroni.yml failover --candidate pg-2 --force"
    assert parts[3].label is not None and parts[3].label.startswith(CHANGES_STATE)
    assert parts[1].label is None, "a read-only command wears no label"


def test_a_long_section_is_cut_between_paragraphs_never_inside_code() -> None:
    shown = shown_section(view(1), None, budget=70, size=lambda p: len(p.text))
    assert shown.truncated
    assert [p.text for p in shown.parts] == [
        "Check who leads first:",
        "patronictl -c /etc/patroni.yml list",
    ]


def test_slack_card_offers_a_button_per_other_section_up_to_five() -> None:
    answered = replace(result(), runbook=view(4, best=2))
    card = render_slack(answered)
    assert_valid(card)
    sections = {k: v for k, v in buttons(card).items() if k.startswith("show_section:")}
    assert sorted(sections) == ["show_section:0", "show_section:1", "show_section:3"]
    choice = parse_choice(sections["show_section:3"]["value"])
    assert choice is not None
    assert (choice.answer_id, choice.document_id, choice.section) == (
        ANSWER_ID,
        "runbooks/doc-1",
        3,
    )
    assert CHANGES_STATE in json.dumps(card.blocks, ensure_ascii=False)


def test_slack_card_offers_a_menu_past_five_sections_and_keeps_its_limits() -> None:
    huge = "\n\n".join(f"Paragraph {i}. " + "word " * 150 for i in range(40))
    answered = replace(result(), runbook=view(40, text=huge))
    card = render_slack(answered, section=7)
    assert_valid(card)
    [menu] = [
        e
        for b in card.blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["type"] == "static_select"
    ]
    assert len(menu["options"]) == MAX_SECTIONS - 1
    assert "open the runbook" in json.dumps(card.blocks)


def test_teams_card_offers_the_sections_and_fits_the_activity_limit() -> None:
    huge = "\n\n".join(f"Paragraph {i}. " + "word " * 150 for i in range(40))
    for sections in (3, 40):
        card = render_teams(replace(result(), runbook=view(sections, text=huge)), section=1)
        assert card_problems(card) == [] and fits(card)
        assert len(section_buttons(card)) == min(sections, MAX_SECTIONS) - 1
        top = [a["type"] for e in card["body"] if e["type"] == "ActionSet" for a in e["actions"]]
        assert ("Action.ShowCard" in top) == (sections > 5), "past five, behind one button"


def test_gold_section_counts_when_shown_or_one_click_away() -> None:
    runbook = view(MAX_SECTIONS + 5)
    assert gold_in_card(runbook, ["Detail 3"]), "a sub-heading inside an offered section"
    assert gold_in_card(runbook, [None])
    assert not gold_in_card(runbook, [f"Step {MAX_SECTIONS + 2}"]), "past what the card offers"
    assert gold_in_card(replace(runbook, best=MAX_SECTIONS + 2), [f"Step {MAX_SECTIONS + 2}"])
