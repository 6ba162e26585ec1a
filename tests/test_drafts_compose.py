"""An incident thread drafted into a runbook: organised, in order, cited, never invented."""

from __future__ import annotations

from collections import Counter

import pytest

from bot.core.drafts.compose import compose_draft
from bot.core.drafts.headings import Headings, choose_headings
from bot.core.drafts.redaction import REDACTED, redact
from bot.core.drafts.render import render_markdown
from rag import CHANGES_STATE
from tests.drafts_threads import COMMANDS, SECRET, kafka_thread, link


def test_the_alert_becomes_the_symptoms_and_the_commands_the_steps_in_posting_order() -> None:
    draft = compose_draft(kafka_thread())
    assert draft.title == draft.alert_name == "KafkaBrokerDiskUsageHigh"
    assert "fires (severity `critical`, instance `kafka-2:9308`)" in draft.symptoms[0]
    assert "disk usage 93% on /var/lib/kafka" in draft.symptoms[1]
    assert [s.command for s in draft.steps] == list(COMMANDS)
    assert [(s.author, s.link) for s in draft.steps] == [
        ("Priya", link(2)),
        ("Priya", link(4)),
        ("Tomasz", link(7)),
    ]
    assert draft.steps[0].note == "checked which topics are biggest"


def test_the_last_command_that_acted_before_it_got_better_is_the_mitigation() -> None:
    draft = compose_draft(kafka_thread())
    assert [s.command for s in draft.diagnosis] == [COMMANDS[0]]
    assert [s.command for s in draft.mitigation] == [COMMANDS[1]]
    assert [s.command for s in draft.verification] == [COMMANDS[2]]
    assert [q.text for q in draft.fix] == [
        "disk going down now, 81%",
        "none under-replicated, disk at 64%. that fixed it",
    ]


def test_a_question_asked_after_the_fix_is_left_open() -> None:
    draft = compose_draft(kafka_thread())
    assert [(q.text, q.author) for q in draft.open_questions] == [
        ("should we page at 85% instead of 90%?", "Tomasz")
    ]


def test_the_secret_is_redacted_and_the_draft_says_how_many() -> None:
    draft = compose_draft(kafka_thread())
    markdown = render_markdown(draft)
    assert SECRET not in markdown
    assert draft.redactions == 1
    assert "1 secret posted in the thread was redacted" in markdown


def test_the_markdown_has_frontmatter_sections_and_a_link_per_step() -> None:
    markdown = render_markdown(compose_draft(kafka_thread()), owner="U_PRIYA")
    assert markdown.startswith('---\ntitle: "KafkaBrokerDiskUsageHigh"\nowner: "U_PRIYA"\n---\n')
    sections = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert sections == [
        "## Symptoms",
        "## Diagnosis",
        "## Mitigation",
        "## Verification",
        "## Open questions",
    ]
    assert f"— [Priya]({link(4)})" in markdown
    positions = [markdown.index(c) for c in COMMANDS]
    assert positions == sorted(positions)


def test_a_state_changing_command_is_marked_as_answers_mark_it() -> None:
    replies = (
        ("U_A", "Ana", "the pod is wedged: `kubectl -n kafka delete pod kafka-2`"),
        ("U_A", "Ana", "it came back, that fixed it"),
    )
    draft = compose_draft(kafka_thread(replies))
    assert draft.mitigation[0].changes_state == ("deletes",)
    assert f"1. {CHANGES_STATE} (deletes): the pod is wedged" in render_markdown(draft)


def test_a_thread_without_commands_or_a_fix_is_empty() -> None:
    replies = (("U_A", "Ana", "anyone looking?"), ("U_B", "Ben", "on it, will report back"))
    draft = compose_draft(kafka_thread(replies))
    assert draft.empty
    assert draft.steps == () and draft.fix == ()


def test_a_thread_with_commands_but_no_fix_says_it_does_not_know_the_fix() -> None:
    replies = (("U_A", "Ana", "checked `df -h /var/lib/kafka` it is full"),)
    draft = compose_draft(kafka_thread(replies))
    assert not draft.empty and draft.mitigation == ()
    assert "The thread does not say what fixed it." in render_markdown(draft)


def test_the_resolved_alert_post_marks_the_fix() -> None:
    replies = (
        ("U_A", "Ana", "restarting the broker: `systemctl restart kafka`"),
        ("U_A", "Ana", "checking lag `kafka-consumer-groups --describe --all-groups`"),
    )
    thread = kafka_thread(replies)
    resolved = thread.messages[0].__class__(
        "9", "U_AM", "alertmanager", "[RESOLVED] KafkaBrokerDiskUsageHigh kafka-2", link(9), True
    )
    thread = thread.__class__(**{**thread.__dict__, "messages": (*thread.messages, resolved)})
    draft = compose_draft(thread)
    assert [s.command for s in draft.mitigation] == ["systemctl restart kafka"]
    assert "stops or restarts a service" in draft.mitigation[0].changes_state


def test_headings_follow_the_tenants_own_runbooks() -> None:
    counts = Counter({"Resolution": 9, "Mitigation": 2, "Triage": 5, "Impact": 4, "Setup": 30})
    chosen = choose_headings(counts)
    assert chosen == Headings(
        symptoms="Impact", diagnosis="Triage", mitigation="Resolution", verification="Verification"
    )
    assert choose_headings(Counter()) == Headings()


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("token xoxb-1234567890-abcdefghijkl", "xoxb-1234567890-abcdefghijkl"),
        ("export GH=ghp_" + "a" * 36, "ghp_" + "a" * 36),
        ("GITLAB glpat-" + "x1y2z3" * 4, "glpat-" + "x1y2z3" * 4),
        ("aws AKIA" + "ABCDEFGHIJKLMNOP", "AKIAABCDEFGHIJKLMNOP"),
        ("psql postgres://app:s3cr3t-pw@db-1:5432/app", "s3cr3t-pw"),
        ("curl -H 'Authorization: Bearer eyJhbGciOi.abc.def' https://x", "eyJhbGciOi.abc.def"),
        ("mysql -u root --password=hunter22 db", "hunter22"),
        ("the password: correct-horse-battery", "correct-horse-battery"),
        ("PGPASSWORD=pg-Secret-1 psql -h db", "pg-Secret-1"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE\n"
            "-----END OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXktdjE",
        ),
    ],
)
def test_each_kind_of_secret_is_redacted(text: str, secret: str) -> None:
    redacted = redact(text)
    assert secret not in redacted.text
    assert REDACTED in redacted.text
    assert redacted.count == 1


def test_ordinary_commands_are_not_redacted() -> None:
    text = "kubectl -n kafka get pods -o wide; curl https://status.example.com/health"
    assert redact(text) == redact(text).__class__(text, 0)
