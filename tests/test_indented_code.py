"""Indented code blocks (CommonMark's four spaces after a blank line) are code everywhere fenced
blocks are: cut as commands, quoted whole, marked "changes state" in the answer, on both cards,
in the CLI text and in the runbook section a card shows. The runbook is the OpenShift
collection's own (evals/collections/openshift), parsed and chunked as ingest does."""

from __future__ import annotations

from pathlib import Path

from bot.core.answers.runbook_parts import section_parts
from bot.slack.blocks import render_result as render_slack
from bot.teams.cards import render_result as render_teams
from rag import CHANGES_STATE, AskResult, code_changes_state
from rag.answering.answerers import ExtractiveAnswerer
from rag.answering.answerers._passages import cut_units
from rag.answering.indented_code import fence_indented_code, indented_code_spans
from rag.answering.runbook_sections import SectionChunk, sections_of
from rag.answering.verify import verify_draft
from rag.formats.markdown import parse_runbook
from rag.ingest.chunking import chunk_runbook
from rag.retrieval.evidence import Excerpt
from rag.textout import format_ask_result
from tests.adaptive_cards import card_problems
from tests.test_blocks import assert_valid, shown
from tests.test_extractive import excerpt

DOCUMENT = "cluster-network-operator/NodeWithoutOVNKubeNodePodRunning"
RUNBOOK = (
    Path(__file__).resolve().parents[1] / "evals/collections/openshift/alerts" / f"{DOCUMENT}.md"
).read_text(encoding="utf-8")
DELETE = "oc delete po <ovnkube-node> -n openshift-ovn-kubernetes"
DELETES = f"{CHANGES_STATE} (deletes)"
QUESTION = "NodeWithoutOVNKubeNodePodRunning is firing, ovnkube-node pod not running, what do I do"


def stored_chunks() -> list[SectionChunk]:
    """The runbook's chunks as ingest stores them (parser, then chunker, default sizes)."""
    drafts = chunk_runbook(
        parse_runbook(RUNBOOK, fallback_title=DOCUMENT), max_chars=1500, overlap_chars=150
    )
    return [SectionChunk(d.ordinal, list(d.heading_path), d.content) for d in drafts]


def section(heading: str) -> str:
    return next(c.content for c in stored_chunks() if c.heading_path[-1] == heading)


def excerpts() -> tuple[Excerpt, ...]:
    return (
        excerpt(1, section("Mitigation"), DOCUMENT, "Mitigation"),
        excerpt(2, section("Diagnosis"), DOCUMENT, "Diagnosis"),
    )


async def answered() -> AskResult:
    found = excerpts()
    draft = await ExtractiveAnswerer().answer(QUESTION, found)
    verified = verify_draft(draft, found)
    assert verified.problems == () and verified.dropped == ()
    return AskResult(
        "answered", None, verified.text, verified.citations, (), "extractive", {}, tenant="ocp"
    )


def test_the_stored_chunk_keeps_the_command_indented_after_a_blank_line() -> None:
    mitigation = section("Mitigation")

    assert f"\n\n    {DELETE}\n" in mitigation
    assert code_changes_state(mitigation) == ("deletes",)
    assert code_changes_state(section("Diagnosis")) == ()


def test_each_indented_command_is_a_code_block_its_sentence_introduces() -> None:
    units = cut_units(section("Mitigation"))

    step = next(u for u in units if u.display.startswith("If you are seeing"))
    assert step.code is not None and step.code.body == DELETE
    assert all(DELETE not in u.display for u in units)
    diagnosis = [u.code.body for u in cut_units(section("Diagnosis")) if u.code is not None]
    assert diagnosis[0] == "oc get node -l kubernetes.io/os!=windows"
    assert len(diagnosis) == 5


async def test_the_answer_quotes_the_delete_fenced_and_every_surface_marks_it() -> None:
    result = await answered()

    assert f"```\n{DELETE}\n```\n[1]" in result.answer
    cli = format_ask_result(result)
    assert cli.index(DELETES) < cli.index(DELETE)
    assert cli.count(DELETES) == 1
    slack = render_slack(result)
    assert f"*{DELETES}*" in shown(slack)
    assert_valid(slack)
    teams = render_teams(result)
    assert DELETES in teams["body"][0]["inlines"][0]["text"]
    assert card_problems(teams) == []


def test_the_runbook_section_a_card_shows_has_the_command_as_marked_code() -> None:
    sections = sections_of(stored_chunks(), title="NodeWithoutOVNKubeNodePodRunning")
    mitigation = next(s for s in sections if s.heading == "Mitigation")

    parts = section_parts(mitigation.text)
    code = [part for part in parts if part.code]
    assert [part.text for part in code] == [DELETE]
    assert code[0].label == DELETES
    assert all(part.label is None for part in parts if not part.code)


def test_indented_lines_that_commonmark_reads_as_text_stay_text() -> None:
    lazy = "Delete the pod with\n    oc delete po x -n y\nif it hangs."
    item = "- Drain the node first.\n\n    Then kubectl delete the node object.\n"
    # A chunk cut from a list item's text opens indented (gitlab-com-runbooks,
    # docs/patroni/scale-down-patroni.md), as does one cut from a nested list.
    cut = "    It can take a few minutes until all connections are gone.\n\nThen stop it.\n"
    nested = "Then:\n\n    - oc delete po x -n y\n    - check the daemonset\n"
    # A fenced block indented under a list item is that fenced block.
    fence = "Run it:\n\n    ```shell\n    sudo chef-client\n    ```\n"

    for text in (lazy, item, cut, nested, fence):
        assert indented_code_spans(text) == (), text
    assert fence_indented_code(item) == item
    inside_item = "1. Delete the pod:\n\n        oc delete po x -n y\n"
    fenced = "1. Delete the pod:\n\n```\noc delete po x -n y\n```\n"
    assert fence_indented_code(inside_item) == fenced
