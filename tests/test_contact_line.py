"""An answer to "who do I page" whose runbook names no one opens on its "Who to contact" line,
on every surface: the line cites nothing, so it is no step of the quote after it (that step's
"changes state" label and its [n] stay with the step). The runbook owner it names is a labelled
field of both cards, and survives the answer being stored and read back."""

from __future__ import annotations

from dataclasses import replace

from bot.core.answers.citations import group_citations, labelled_steps
from bot.core.answers.outcome_text import OWNER_LABEL
from bot.core.answers.result_codec import result_from_json, result_to_json
from bot.slack.blocks import render_result as render_slack
from bot.teams.cards import render_result as render_teams
from rag import CHANGES_STATE, AskResult, Citation, CitedChunk
from rag.retrieval.escalation import NO_CONTACT_LINE, owner_line
from rag.textout import format_ask_result
from tests.adaptive_cards import card_problems
from tests.test_blocks import assert_valid, evidence, result, sections, shown

STATUS = "systemctl status search-indexer"
STEP = f"Check the indexer workers with `{STATUS}` [1]"
DELETE = "kubectl delete pod -l app=search-indexer -n search"
DELETE_STEP = f"Delete the stuck indexer pods:\n```bash\n{DELETE}\n```\n[2]"
DELETES = f"{CHANGES_STATE} (deletes)"
CONTACT = owner_line("team-search")


def contact_result(line: str = CONTACT, owner: str | None = "team-search") -> AskResult:
    runbook = evidence(1, title="Search indexer stuck", headings=())
    runbook = replace(runbook, content=f"{STEP[:-4]}.\n\n{DELETE_STEP[:-4]}")
    citations = (Citation(1, STATUS, runbook), Citation(2, DELETE, runbook))
    answer = f"{line}\n\n{DELETE_STEP}\n{STEP}"
    return replace(result(answer=answer, citations=citations), owner_contact=owner)


def test_the_contact_line_is_a_step_of_its_own_that_cites_and_changes_nothing() -> None:
    steps = labelled_steps(contact_result().answer)

    assert [(label, step.numbers) for label, step in steps] == [
        (None, ()),
        (DELETES, (2,)),
        (None, (1,)),
    ]
    assert steps[0][1].text.strip() == CONTACT
    sources = group_citations(contact_result().citations, answer=contact_result().answer)
    assert [(s.n, s.changes) for s in sources] == [(1, ()), (2, ("deletes",))]


def test_the_cli_text_opens_on_the_contact_line_with_the_label_below_it() -> None:
    lines = format_ask_result(contact_result()).split("\n")

    assert lines[2] == CONTACT
    assert lines.index(DELETES) == lines.index("Delete the stuck indexer pods:") - 1
    assert lines.index(CONTACT) < lines.index(DELETES)


def test_the_slack_card_opens_on_the_contact_line_and_labels_the_owner() -> None:
    card = render_slack(contact_result())

    answer = sections(card)[0]
    assert answer.startswith(CONTACT + "\n")
    assert answer.index(CONTACT) < answer.index(f"*{DELETES}*") < answer.index(DELETE)
    owner = f"*{OWNER_LABEL}* (from the runbook's metadata, not its text): team-search"
    assert sections(card)[1] == owner
    assert_valid(card)


def test_the_teams_card_opens_on_the_contact_line_and_labels_the_owner() -> None:
    card = render_teams(contact_result())

    answer = card["body"][0]["inlines"][0]["text"]
    assert answer.startswith(CONTACT + "\n")
    assert answer.index(CONTACT) < answer.index(DELETES) < answer.index(DELETE)
    owner = card["body"][1]["inlines"]
    assert owner[0] == {"type": "TextRun", "text": OWNER_LABEL, "weight": "Bolder"}
    assert owner[-1] == {"type": "TextRun", "text": "team-search"}
    assert card_problems(card) == []


def test_without_an_owner_the_cards_say_so_in_the_line_and_show_no_owner_field() -> None:
    unowned = contact_result(NO_CONTACT_LINE, owner=None)

    slack = render_slack(unowned)
    assert sections(slack)[0].startswith(NO_CONTACT_LINE)
    assert OWNER_LABEL not in shown(slack)
    teams = render_teams(unowned)
    assert teams["body"][0]["inlines"][0]["text"].startswith(NO_CONTACT_LINE)
    assert OWNER_LABEL not in str(teams)


def test_an_owner_that_tries_to_mention_is_shown_inert() -> None:
    hostile = contact_result(owner="<!channel> team-search")

    slack = shown(render_slack(hostile))
    assert "&lt;!channel&gt; team-search" in slack and "<!channel>" not in slack


def chunks_of(stored: AskResult) -> dict[int, CitedChunk]:
    return {
        c.evidence.chunk_id: CitedChunk(
            chunk_id=c.evidence.chunk_id,
            document_id=c.evidence.document_id,
            version=1,
            title=c.evidence.title,
            heading_path=list(c.evidence.heading_path),
            content=c.evidence.content,
            url=c.evidence.url,
            owner=c.evidence.owner,
            updated=c.evidence.updated,
            service=c.evidence.service,
            superseded=False,
            current_version=None,
        )
        for c in stored.citations
    }


def test_the_owner_to_contact_is_stored_with_the_answer_and_older_rows_read_without_it() -> None:
    fresh = contact_result()
    data = result_to_json(fresh)

    assert data["owner_contact"] == "team-search"
    read = result_from_json(data, chunks_of(fresh))
    assert read.changes == () and read.result.answer == fresh.answer
    assert read.result.owner_contact == "team-search"
    older = {key: value for key, value in data.items() if key != "owner_contact"}
    assert result_from_json(older, chunks_of(fresh)).result.owner_contact is None
