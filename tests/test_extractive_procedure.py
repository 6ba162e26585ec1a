"""The extractive answer's "also see" lines point at what to do: when the lead section is not
the runbook's procedure, the first line comes from that runbook's Mitigation among the sources,
whatever its rank, before the other sources. The texts are the demo corpus' runbooks, quoted as
ingest chunks them."""

from __future__ import annotations

from rag.answering.answerers import ExtractiveAnswerer
from rag.answering.answerers.extractive import MAX_ALSO_SEE
from rag.answering.answers import Draft
from rag.answering.verify import verify_draft
from rag.retrieval.evidence import Excerpt
from tests.test_extractive_sections import in_runbook, section

KAFKA = "messaging/kafka-consumer-lag"
KAFKA_TITLE = "Kafka consumer lag on order events"
WEBHOOK = section("payments/gateway-5xx", "Expired PSP webhook secret")
# Ranked as retrieval ranks them for "the warehouse pick queue is empty during business
# hours": the runbook's procedure comes fourth, behind another runbook's section.
WAREHOUSE = (
    in_runbook(1, section(KAFKA, "Symptoms"), KAFKA, 30, KAFKA_TITLE, "Symptoms"),
    in_runbook(
        2,
        WEBHOOK,
        "payments/gateway-5xx",
        70,
        "Payments gateway returning 5xx",
        "Known failure modes",
        "Expired PSP webhook secret",
    ),
    in_runbook(3, section(KAFKA, "Diagnosis"), KAFKA, 31, KAFKA_TITLE, "Diagnosis"),
    in_runbook(
        4,
        section(KAFKA, "Scale the consumers"),
        KAFKA,
        33,
        KAFKA_TITLE,
        "Mitigation",
        "Scale the consumers",
    ),
)


def also_see(draft: Draft) -> list[str]:
    """Each "also see" line of the answer with the command block it carries."""
    return [("Also see" + part).rstrip("\n") for part in draft.text.split("Also see")[1:]]


async def test_also_see_opens_with_the_lead_runbooks_procedure_and_its_command() -> None:
    draft = await ExtractiveAnswerer().answer(
        "the warehouse pick queue is empty during business hours", WAREHOUSE
    )

    lines = also_see(draft)
    assert lines[0] == (
        f"Also see *{KAFKA_TITLE} › Mitigation › Scale the consumers*: More consumers than "
        "partitions is pointless; the ceiling is 24.\n```bash\n"
        "kubectl -n fulfilment scale deploy/fulfilment-service --replicas=24\n```\n[4]"
    )
    assert len(lines) <= MAX_ALSO_SEE
    verification = verify_draft(draft, WAREHOUSE)
    assert verification.problems == () and verification.text == draft.text


async def test_a_question_about_what_the_alert_means_gets_no_procedure_line() -> None:
    draft = await ExtractiveAnswerer().answer(
        "what does it mean when the warehouse pick queue is empty?", WAREHOUSE
    )

    assert draft.text.startswith("- Alert `KafkaConsumerLagHigh`")
    assert "Scale the consumers" not in draft.text


async def test_no_procedure_line_when_the_lead_already_says_what_to_do() -> None:
    # The lead is a Mitigation sub-section: the other sources follow in rank order.
    excerpts = (
        in_runbook(
            1, section(KAFKA, "Scale the consumers"), KAFKA, 33, KAFKA_TITLE, "Mitigation", "Scale"
        ),
        in_runbook(2, section(KAFKA, "Diagnosis"), KAFKA, 31, KAFKA_TITLE, "Diagnosis"),
        in_runbook(
            3,
            section(KAFKA, "Stop the rebalance loop"),
            KAFKA,
            35,
            KAFKA_TITLE,
            "Mitigation",
            "Stop the rebalance loop",
        ),
    )
    draft = await ExtractiveAnswerer().answer(
        "fulfilment-service consumers are behind, scale them or stop the rebalance loop?",
        excerpts,
    )

    markers = [line.rsplit("[", 1)[1] for line in also_see(draft)]
    assert markers == ["2]", "3]"]


async def test_the_procedure_line_opens_the_procedure_when_its_first_command_comes_late() -> None:
    mitigation = (
        "Confirm that the lag grows on every partition of the topic.\n"
        "Compare the consumer CPU with the warehouse API latency first.\n"
        "Ask team-fulfilment whether a release went out in the last hour.\n"
        "Then raise the number of consumers:\n\n"
        "```bash\nkubectl -n fulfilment scale deploy/fulfilment-service --replicas=24\n```\n"
    )
    excerpts = (
        *WAREHOUSE[:3],
        in_runbook(4, mitigation, KAFKA, 32, KAFKA_TITLE, "Mitigation"),
    )
    draft = await ExtractiveAnswerer().answer(
        "the warehouse pick queue is empty during business hours", excerpts
    )

    assert also_see(draft)[0] == (
        f"Also see *{KAFKA_TITLE} › Mitigation*: Confirm that the lag grows on every partition "
        "of the topic. [4]"
    )


async def test_a_faq_entry_that_says_how_to_fix_something_else_is_no_procedure() -> None:
    # An FAQ is a document of many topics: an entry headed "... how do I fix it?" answers
    # another question, so the other sources keep their rank order.
    faq = ("FAQ", "Performance", 'What does the etcd warning "apply entries took too long" mean?')
    space = ("FAQ", "Operation", 'What does "mvcc: database space exceeded" mean, how to fix it?')
    excerpts = (
        in_runbook(
            1,
            "After most requests are committed, the etcd server applies them to its backend "
            "storage. A slow disk makes applying entries take too long.\n",
            "faq",
            5,
            *faq,
        ),
        in_runbook(
            2,
            "Applying entries takes longer when the disk is shared with another busy process.\n",
            "hardware",
            9,
            "Hardware recommendations",
            "Disks",
        ),
        in_runbook(
            3,
            "If etcd runs low on storage space, it raises a space quota alarm and applies no "
            "more writes.\n",
            "faq",
            7,
            *space,
        ),
    )
    draft = await ExtractiveAnswerer().answer(
        "etcd warns that applying entries took too long", excerpts
    )

    markers = [line.rsplit("[", 1)[1] for line in also_see(draft)]
    assert markers == ["2]", "3]"]


async def test_an_also_see_label_whose_heading_ends_like_a_sentence_stays_whole() -> None:
    excerpts = (
        in_runbook(
            1,
            "The compactor halts when its persistent volume is full.\n",
            "acm/ACMThanosCompactHalted",
            1,
            "ACMThanosCompactHalted",
            "Meaning",
        ),
        in_runbook(
            2,
            "Check that the compactor pod runs again and its halted metric is back to zero.\n",
            "acm/ACMThanosCompactHalted",
            4,
            "ACMThanosCompactHalted",
            "Mitigation",
            "4. Verify Resolution",
        ),
    )
    draft = await ExtractiveAnswerer().answer("the thanos compactor halted again", excerpts)

    assert "Also see *ACMThanosCompactHalted › Mitigation › 4.\u00a0Verify Resolution*" in (
        draft.text
    )
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.text == draft.text


async def test_also_see_passes_over_a_step_of_two_sentences() -> None:
    # Verification checks each sentence on its own: the first sentence of a two-sentence step
    # would be dropped with the label and leave "Red Hat offers ..." as a fragment.
    mitigation = (
        "- When control plane memory is high, ensure the nodes are sized for the cluster. Red "
        "Hat offers sizing guidance for control plane nodes.\n"
        "- Move infrastructure workloads off the control plane nodes.\n"
    )
    excerpts: tuple[Excerpt, ...] = (
        in_runbook(
            1,
            "Control plane nodes that run out of memory make the API server unresponsive.\n",
            "mco/ExtremelyHighIndividualControlPlaneMemory",
            1,
            "ExtremelyHighIndividualControlPlaneMemory",
            "Impact",
        ),
        in_runbook(
            2,
            mitigation,
            "mco/ExtremelyHighIndividualControlPlaneMemory",
            3,
            "ExtremelyHighIndividualControlPlaneMemory",
            "Mitigation",
        ),
    )
    draft = await ExtractiveAnswerer().answer("control plane nodes memory is high", excerpts)

    assert also_see(draft) == [
        "Also see *ExtremelyHighIndividualControlPlaneMemory › Mitigation*: Move infrastructure "
        "workloads off the control plane nodes. [2]"
    ]
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.text == draft.text


async def test_a_procedure_section_with_nothing_to_show_gives_way_to_the_next_one() -> None:
    # The best-ranked Mitigation section holds only a two-sentence step: the next one shows.
    excerpts = (
        WAREHOUSE[0],
        in_runbook(
            2,
            "- Stop the email-notifier consumers first. Then move the partition past the bad "
            "offset.\n",
            KAFKA,
            34,
            KAFKA_TITLE,
            "Mitigation",
            "Skip a poison-pill message",
        ),
        *WAREHOUSE[2:],
    )
    draft = await ExtractiveAnswerer().answer(
        "the warehouse pick queue is empty during business hours", excerpts
    )

    assert also_see(draft)[0].startswith(
        f"Also see *{KAFKA_TITLE} › Mitigation › Scale the consumers*: More consumers"
    )
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.text == draft.text
