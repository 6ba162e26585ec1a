"""Citation numbers count up in reading order, and each still names the chunk it was verified on."""

from __future__ import annotations

from rag.answering.markers import find_markers, marker_numbers
from rag.answering.reading_order import in_reading_order
from rag.answering.verify import verify_draft
from tests.test_verify import DIAGNOSIS, ESCALATION, EXCERPTS, MITIGATION, draft

PSP = 'If the errors are `origin="psp"` and HarborPay is degraded'
PAGE = "Page `acme-payments` in PagerDuty."
PANEL = 'The panel "5xx by origin" splits errors by the `origin` label.'


def numbers_in_order(text: str) -> list[int]:
    return [n for match in find_markers(text) for n in marker_numbers(match)]


def test_markers_read_one_two_three_in_order_of_first_appearance_after_verification() -> None:
    verified = verify_draft(
        draft(
            f"{PAGE} [3]\n{PSP}, move card traffic. [2]\n{PANEL} [1, 3]",
            (3, PAGE),
            (2, PSP),
            (1, PANEL),
        ),
        EXCERPTS,
    )
    assert verified.ok and not verified.dropped
    text, citations = in_reading_order(verified.text, verified.citations)
    assert numbers_in_order(text) == [1, 2, 1, 3]
    assert text.endswith(f"{PANEL} [1, 3]")
    assert [c.n for c in citations] == [1, 2, 3]
    # Each number still names the chunk whose content holds its quote.
    chunks = {c.n: (c.evidence.content, c.quote) for c in citations}
    assert chunks[1] == (ESCALATION, PAGE)
    assert chunks[2] == (MITIGATION, PSP)
    assert chunks[3] == (DIAGNOSIS, PANEL)


def test_markers_inside_code_keep_their_digits() -> None:
    text = "Check `pods[0]` first. [4]\n```\nkubectl get pods -o jsonpath='{.items[2]}'\n```\n[2]"
    renumbered, _ = in_reading_order(text, [])
    assert "`pods[0]`" in renumbered and "{.items[2]}" in renumbered
    assert numbers_in_order(renumbered) == [1, 2]


def test_quotes_sharing_a_number_keep_one_number_and_their_order() -> None:
    verified = verify_draft(
        draft(f"{PSP}. [2]\n{PANEL} [1]\n{PAGE} [3]", (2, PSP), (1, PANEL), (3, PAGE)), EXCERPTS
    )
    second_quote = "The change takes effect within 15 seconds."
    extra = verify_draft(draft(f"{second_quote} [2]", (2, second_quote)), EXCERPTS).citations
    text, citations = in_reading_order(
        verified.text + f"\n{second_quote} [2]", [*verified.citations, *extra]
    )
    assert numbers_in_order(text) == [1, 2, 3, 1]
    assert [(c.n, c.quote) for c in citations if c.n == 1] == [(1, PSP), (1, second_quote)]
