"""Both cards mark a quoted step or quote holding a state-changing command with "⚠️ changes
state" and leave read-only steps unmarked, as valid Block Kit and Adaptive Cards."""

from __future__ import annotations

from bot.slack.blocks import render_result as render_slack
from bot.teams.cards import render_result as render_teams
from rag import CHANGES_STATE, Citation
from tests.adaptive_cards import card_problems
from tests.test_blocks import assert_valid, evidence, of_type, result, shown

LIST = "patronictl -c /etc/patroni/patroni.yml list pg-main"
FAILOVER = "patronictl -c /etc/patroni/patroni.yml failover pg-main --candidate pg-main-2 --force"
ANSWER = (
    f"Cluster state as Patroni sees it:\n```bash\n{LIST}\n```\n[1]\n"
    "When the leader is gone and Patroni did not elect a new one, pick the replica with the "
    f"least lag and force it:\n```bash\n{FAILOVER}\n```\n[2]"
)
CITATIONS = (
    Citation(1, LIST, evidence(1, headings=("Postgres primary failover", "Diagnosis"))),
    Citation(2, FAILOVER, evidence(2, headings=("Postgres primary failover", "Failover"))),
)


def test_slack_card_labels_the_state_changing_step_and_its_quote_only() -> None:
    card = render_slack(result(answer=ANSWER, citations=CITATIONS))

    text = shown(card)
    label = f"*{CHANGES_STATE} (fails over)*"
    assert text.count(CHANGES_STATE) == 1
    assert text.index(label) < text.index(FAILOVER)
    assert text.index(LIST) < text.index(label)
    titles = [block["title"]["text"] for block in of_type(card, "container")]
    assert titles[0].startswith("[1] ") and CHANGES_STATE not in titles[0]
    assert titles[1].startswith(f"[2] {CHANGES_STATE} (fails over) · ")
    assert_valid(card)


def test_slack_card_of_read_only_diagnosis_carries_no_label() -> None:
    answer = f"Cluster state as Patroni sees it:\n```bash\n{LIST}\n```\n[1]"
    card = render_slack(result(answer=answer, citations=CITATIONS[:1]))

    assert CHANGES_STATE not in str(card.blocks)
    assert_valid(card)


def test_teams_card_labels_the_state_changing_step_and_its_quote_only() -> None:
    card = render_teams(result(answer=ANSWER, citations=CITATIONS))

    answer_text = card["body"][0]["inlines"][0]["text"]
    label = f"{CHANGES_STATE} (fails over)"
    assert answer_text.count(CHANGES_STATE) == 1
    assert answer_text.index(LIST) < answer_text.index(label) < answer_text.index(FAILOVER)
    containers = [e for e in card["body"] if e["type"] == "Container"]
    headings = [c["items"][0]["inlines"] for c in containers]
    assert all(CHANGES_STATE not in run["text"] for run in headings[0])
    assert headings[1][-1] == {
        "type": "TextRun",
        "text": f" · {label}",
        "color": "Attention",
    }
    assert card_problems(card) == []


def test_teams_card_of_read_only_diagnosis_carries_no_label() -> None:
    answer = f"Cluster state as Patroni sees it:\n```bash\n{LIST}\n```\n[1]"
    card = render_teams(result(answer=answer, citations=CITATIONS[:1]))

    assert CHANGES_STATE not in str(card)
    assert card_problems(card) == []
