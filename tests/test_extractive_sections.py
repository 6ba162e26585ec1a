"""The extractive answer reads as runbook sections: it opens where a section or step opens,
keeps steps and commands in order, marks each paragraph or step once, never leaves a sentence
hanging at its colon, and follows a pointer to the runbook it names. The texts are the demo
corpus' runbooks, quoted as ingest chunks them (a section's text without its heading)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from rag import format_ask_result
from rag.answering.answerers import ExtractiveAnswerer
from rag.answering.answers import AskResult, Citation
from rag.answering.verify import find_markers, normalize_quote, verify_draft
from rag.retrieval.evidence import Excerpt
from tests.test_extractive import excerpt

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "acme"


def section(runbook: str, heading: str) -> str:
    """The text under ``heading`` in a demo runbook, up to the next heading (a ``#`` comment
    inside a code block is not one)."""
    lines = (CORPUS / f"{runbook}.md").read_text(encoding="utf-8").split("\n")
    start = lines.index(
        next(line for line in lines if re.fullmatch(rf"#+ {re.escape(heading)}", line))
    )
    kept: list[str] = []
    in_code = False
    for line in lines[start + 1 :]:
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            break
        kept.append(line)
    return "\n".join(kept).strip("\n") + "\n"


PSP_FAILOVER = section("payments/gateway-5xx", "Fail over to the secondary PSP")
SCALE_GATEWAY = section("payments/gateway-5xx", "Scale the gateway")
BUY_HEADROOM = section("cache/redis-evictions", "Buy headroom")
ROLL_BACK_RELEASE = section("checkout/high-api-latency", "Roll back a bad release")
ABORT = section("deploys/rollback", "Abort a rollout that is still in progress")
UNDO = section("deploys/rollback", "Undo a rollout that already reached 100%")
STOP_ARGO = section("deploys/rollback", "Stop Argo CD from re-applying the bad version")
UNPLANNED = section("database/primary-failover", "Unplanned failover")
GATEWAY_ROLLBACK = section("payments/gateway-5xx", "Rollback")


def paragraph_starts(content: str) -> set[str]:
    """The first words of every paragraph and list item of ``content``, normalised."""
    starts = set()
    for block in re.split(r"\n\s*\n", content):
        for line in block.strip().split("\n"):
            first = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).strip()
            if first and not first.startswith(("```", "|")):
                starts.add(normalize_quote(first)[:40])
            break
    return starts


async def test_a_long_section_opens_at_a_paragraph_start_never_mid_paragraph() -> None:
    # The question's words sit in the section's last paragraph, second sentence ("Above that
    # it answers 429 ..."): the quote opens at that paragraph's first sentence or earlier.
    excerpts = (excerpt(1, PSP_FAILOVER, "payments/gateway-5xx", "Fail over to the secondary PSP"),)
    draft = await ExtractiveAnswerer().answer(
        "Kestrel rate limited 429 above the cap, what does the gateway count?", excerpts
    )

    first_line = draft.text.split("\n")[0]
    assert not first_line.startswith("Above that")
    assert normalize_quote(draft.citations[0].quote)[:40] in paragraph_starts(PSP_FAILOVER)
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.text == draft.text


async def test_each_paragraph_or_step_carries_one_marker_not_one_per_sentence() -> None:
    excerpts = (excerpt(1, UNPLANNED, "database/primary-failover", "Unplanned failover"),)
    draft = await ExtractiveAnswerer().answer(
        "patroni did not fail over, how do I force the failover and what if every replica lags?",
        excerpts,
    )

    lag_paragraph = next(line for line in draft.text.split("\n") if line.startswith("If every"))
    assert "That decision belongs to the data-platform on-call" in lag_paragraph
    assert len(list(find_markers(lag_paragraph))) == 1
    # The step that introduces the command and the command itself: one marker, after the block.
    assert draft.text.startswith("When the leader is gone and Patroni did not elect a new one")
    assert draft.text.split("```")[0].count("[1]") == 0
    assert len(list(find_markers(draft.text))) == 2
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.text == draft.text


async def test_steps_and_commands_keep_the_runbook_order() -> None:
    excerpts = (excerpt(1, UNDO, "deploys/rollback", "Undo a rollout that already reached 100%"),)
    draft = await ExtractiveAnswerer().answer(
        "how do I undo the rollout and promote it faster during a SEV1?", excerpts
    )

    order = [
        "kubectl argo rollouts undo checkout-api -n checkout\n",
        "--to-revision=41",
        "The undo is itself a canary",
        "kubectl argo rollouts promote checkout-api -n checkout --full",
    ]
    positions = [draft.text.index(text) for text in order]
    assert positions == sorted(positions)
    assert verify_draft(draft, excerpts).problems == ()


async def test_also_see_carries_the_command_its_sentence_introduces() -> None:
    excerpts = (
        excerpt(1, SCALE_GATEWAY, "payments/gateway-5xx", "Scale the gateway"),
        excerpt(2, BUY_HEADROOM, "cache/redis-evictions", "Buy headroom"),
    )
    draft = await ExtractiveAnswerer().answer(
        "raise the gateway replicas temporarily, or maxmemory on redis?", excerpts
    )

    also = draft.text[draft.text.index("Also see") :]
    assert also.startswith(
        "Also see *redis-evictions › Buy headroom*: Raise `maxmemory` temporarily; the node has "
        "room up to 14 GB:\n```bash\nfor i in 0 1 2; do"
    )
    assert also.rstrip().endswith("done\n```\n[2]")
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.text == draft.text


async def test_also_see_never_shows_a_sentence_cut_off_at_its_colon() -> None:
    long_block = "\n".join(f"redis-cli -n {i} CONFIG SET maxmemory 14gb" for i in range(20))
    content = BUY_HEADROOM.replace(
        "for i in 0 1 2; do\n  kubectl -n cache exec redis-cart-$i -c redis -- redis-cli "
        "CONFIG SET maxmemory 14gb\ndone",
        long_block,
    )
    excerpts = (
        excerpt(1, SCALE_GATEWAY, "payments/gateway-5xx", "Scale the gateway"),
        excerpt(2, content, "cache/redis-evictions", "Buy headroom"),
    )
    draft = await ExtractiveAnswerer().answer(
        "raise the gateway replicas temporarily, or maxmemory on redis?", excerpts
    )

    also = [line for line in draft.text.split("\n") if line.startswith("Also see")]
    assert also == [
        "Also see *redis-evictions › Buy headroom*: Open a ticket to resize properly. [2]"
    ]
    assert verify_draft(draft, excerpts).problems == ()


async def test_also_see_never_quotes_a_table_row_without_its_header() -> None:
    # As retrieval ranked them for "how do I fail over the payments database?".
    excerpts = (
        excerpt(1, UNPLANNED, "database/primary-failover", "Unplanned failover"),
        excerpt(2, GATEWAY_ROLLBACK, "payments/gateway-5xx", "Rollback"),
    )
    draft = await ExtractiveAnswerer().answer("how do I fail over the payments database?", excerpts)

    assert "patronictl" in draft.text
    also = [line for line in draft.text.split("\n") if line.startswith("Also see")]
    assert all(not line.split("*: ", 1)[1].startswith("|") for line in also), also
    assert verify_draft(draft, excerpts).problems == ()


async def test_a_pointer_sentence_is_kept_with_the_steps_of_the_runbook_it_names() -> None:
    procedure = ("Rolling back a deploy (Argo Rollouts)", "Rollback procedure")
    # Ranked as retrieval ranked them for "how do I roll back a bad checkout-api release?";
    # chunk ids follow each runbook's own order, as ingest writes them.
    excerpts = (
        in_runbook(
            1, ROLL_BACK_RELEASE, "checkout/high-api-latency", 18, "Roll back a bad release"
        ),
        in_runbook(2, STOP_ARGO, "deploys/rollback", 59, *procedure, "Stop Argo CD"),
        in_runbook(3, UNDO, "deploys/rollback", 58, *procedure, "Undo a rollout"),
        in_runbook(4, ABORT, "deploys/rollback", 57, *procedure, "Abort a rollout"),
    )
    draft = await ExtractiveAnswerer().answer(
        "how do I roll back a bad checkout-api release?", excerpts
    )

    assert draft.text.startswith(
        "Follow `deploys/rollback`. This fixes most latency incidents that start within an hour "
        "of a release. [1]\n*Abort a rollout*:\n```bash\nkubectl argo rollouts abort"
    )
    commands = [
        "kubectl argo rollouts abort checkout-api -n checkout",
        "kubectl argo rollouts undo checkout-api -n checkout",
        "argocd app set checkout-api-prod --sync-policy none",
    ]
    positions = [draft.text.index(command) for command in commands]
    assert positions == sorted(positions)
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.text == draft.text


def in_runbook(n: int, content: str, document: str, chunk_id: int, *headings: str) -> Excerpt:
    base = excerpt(n, content, document, headings[-1]).evidence
    path = headings if len(headings) > 1 else (base.title, *headings)
    evidence = replace(base, chunk_id=chunk_id, heading_path=path)
    return Excerpt(n=n, evidence=evidence, text=content, truncated=False)


async def test_text_card_lists_each_source_once_with_all_its_quotes() -> None:
    excerpts = (excerpt(1, UNPLANNED, "database/primary-failover", "Unplanned failover"),)
    draft = await ExtractiveAnswerer().answer(
        "patroni did not fail over, how do I force the failover?", excerpts
    )
    citations = tuple(Citation(c.n, c.quote, excerpts[0].evidence) for c in draft.citations)
    assert len(citations) > 1
    result = AskResult("answered", None, draft.text, citations, (), "extractive", {}, tenant="acme")

    card = format_ask_result(result)

    assert card.count("[1] primary-failover › Unplanned failover") == 1
    assert "failover pg-main --candidate pg-main-2 --force" in card.split("Sources:")[1]
