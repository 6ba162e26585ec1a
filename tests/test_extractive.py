from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag.answering.answerers import ExtractiveAnswerer
from rag.answering.answerers.extractive import MAX_ALSO_SEE, MAX_LEAD_LINES
from rag.answering.verify import normalize_quote, verify_draft
from rag.retrieval.evidence import Evidence, Excerpt
from rag.retrieval.terms import question_terms

REPO = Path(__file__).resolve().parents[1]

DIAGNOSIS = """\
The `KubePodCrashLooping` alert fires when a container restarts more than 3 times in 15 minutes.
The pod shows `CrashLoopBackOff` in its status while the kubelet waits between restarts.

1. Find the crashing pods and their restart counts:

   ```bash
   kubectl get pods -n <namespace> --field-selector=status.phase!=Succeeded
   ```

2. Read the logs of the previous container instance, because the current one has just started
   and has not failed yet:

   ```bash
   kubectl logs <pod> -n <namespace> --previous --tail=100
   ```

3. Check the last termination reason with `kubectl describe pod <pod>`. `OOMKilled` means the
   container exceeded its memory limit; exit code 1 usually means the application failed on
   start-up, e.g. a missing secret or an unreachable database.

Ignore the `Back-off restarting failed container` events [1]; they are a symptom, not a cause.
"""

MITIGATION = """\
- If the reason is `OOMKilled`, raise the memory limit by 50% in the deployment and roll it out.
- If a deploy in the last hour introduced the crash, roll back with `kubectl rollout undo`.
- Scale the deployment to zero only when the crashing pods harm other services.

Do not delete the pods by hand: the ReplicaSet recreates them with the same crash.
"""

REDIS = """\
Redis evicts keys when `used_memory` reaches `maxmemory`. Check the eviction rate on the
**Cache / Redis** dashboard and compare it with the hit ratio before changing any limit.
"""


def excerpt(n: int, content: str, document: str, section: str) -> Excerpt:
    title = document.rsplit("/", 1)[-1]
    evidence = Evidence(
        chunk_id=10 * n,
        document_id=document,
        version=1,
        title=title,
        heading_path=(title, section),
        content=content,
        url=None,
        owner=None,
        updated=None,
        service=None,
        cosine=0.6,
        vector_rank=n,
        keyword_rank=n,
        score=1 / n,
    )
    return Excerpt(n=n, evidence=evidence, text=content, truncated=False)


EXCERPTS = (
    excerpt(1, DIAGNOSIS, "kubernetes/KubePodCrashLooping", "Diagnosis"),
    excerpt(2, MITIGATION, "kubernetes/KubePodCrashLooping", "Mitigation"),
    excerpt(3, REDIS, "cache/redis-evictions", "Diagnosis"),
)


async def test_answers_from_the_runbook_with_verbatim_quotes_that_verify() -> None:
    question = "Why is my pod in CrashLoopBackOff and how do I read its logs?"
    draft = await ExtractiveAnswerer().answer(question, EXCERPTS)

    assert draft.status == "answered" and draft.provider == "extractive"
    verification = verify_draft(draft, EXCERPTS)
    assert verification.problems == () and verification.dropped == ()
    assert len(verification.citations) == len(draft.citations)
    for citation in verification.citations:
        assert normalize_quote(citation.quote) in normalize_quote(citation.evidence.content)
    assert draft.citations[0].n == 1
    assert "Read the logs of the previous container instance" in draft.text
    assert "kubectl logs <pod> -n <namespace> --previous --tail=100" in draft.text


async def test_quotes_the_short_command_block_that_follows_a_chosen_step() -> None:
    draft = await ExtractiveAnswerer().answer(
        "How do I read the previous container logs?", EXCERPTS
    )

    code = [c for c in draft.citations if c.quote.startswith("kubectl logs")]
    assert [c.quote for c in code] == ["kubectl logs <pod> -n <namespace> --previous --tail=100"]
    assert (
        "```bash\nkubectl logs <pod> -n <namespace> --previous --tail=100\n```\n[1]" in draft.text
    )
    assert verify_draft(draft, EXCERPTS).problems == ()


async def test_prefers_action_steps_for_a_what_to_do_question() -> None:
    draft = await ExtractiveAnswerer().answer("The pod was OOMKilled, what should I do?", EXCERPTS)

    mitigation = [c.quote for c in draft.citations if c.n == 2]
    assert mitigation[0].startswith("If the reason is `OOMKilled`, raise the memory limit by 50%")
    assert verify_draft(draft, EXCERPTS).problems == ()


async def test_leads_with_the_best_section_then_one_line_per_other_source() -> None:
    question = "pods restarts memory limit deployment eviction dashboard Redis logs containers"
    draft = await ExtractiveAnswerer().answer(question, EXCERPTS)

    lines = draft.text.split("\n")
    assert lines[0].startswith("The `KubePodCrashLooping` alert fires") and lines[0].endswith("[1]")
    also = [line for line in lines if line.startswith("Also see")]
    assert [line[-3:] for line in also] == ["[2]", "[3]"][:MAX_ALSO_SEE]
    assert all(line.startswith("Also see") for line in lines[-len(also) :])
    assert verify_draft(draft, EXCERPTS).problems == ()


async def test_section_that_is_one_command_under_its_heading_leads_with_that_command() -> None:
    oldest = (
        "```sql\nselect application_name, query, now() - query_start as query_age\n"
        "from pg_stat_activity where state='active' order by 3 desc limit 5\n```\n"
    )
    excerpts = (
        excerpt(1, oldest, "patroni/query-load", "Top 5 oldest active queries"),
        excerpt(2, REDIS, "cache/redis-evictions", "Diagnosis"),
    )
    draft = await ExtractiveAnswerer().answer(
        "how do i see the oldest active queries on the primary", excerpts
    )

    assert draft.citations[0].n == 1
    assert draft.text.startswith("```sql\nselect application_name, query")
    assert "limit 5\n```\n[1]" in draft.text
    assert verify_draft(draft, excerpts).problems == ()


async def test_code_blocks_are_quoted_whole_or_not_at_all() -> None:
    long_block = "\n".join(
        f"kubectl annotate pod web-{i} checked=true --overwrite" for i in range(30)
    )
    content = (
        "Annotate every pod that was checked during the incident review:\n\n"
        f"```bash\n{long_block}\n```\n\n"
        "Then restart the deployment so the annotations are picked up:\n\n"
        "```\nkubectl rollout restart deploy/web\n```\n"
    )
    excerpts = (excerpt(1, content, "k8s/annotate", "Mitigation"),)
    draft = await ExtractiveAnswerer().answer("how do I annotate and restart the pods?", excerpts)

    assert "kubectl annotate pod web-0" not in draft.text
    assert "```\nkubectl rollout restart deploy/web\n```\n[1]" in draft.text
    assert draft.text.count("```") % 2 == 0
    assert verify_draft(draft, excerpts).problems == ()


async def test_link_definitions_and_html_comments_are_never_quoted() -> None:
    content = (
        "<!-- TODO: move this section to the survival guide before the next review -->\n"
        "Check the sidekiq queue length on the dashboard before scaling the workers.\n\n"
        "[survival guide]: sidekiq-survival-guide-for-sres.md\n"
    )
    excerpts = (excerpt(1, content, "sidekiq/queues", "Diagnosis"),)
    draft = await ExtractiveAnswerer().answer("sidekiq queue survival guide review", excerpts)

    assert "Check the sidekiq queue length" in draft.text
    assert "<!--" not in draft.text and "survival-guide-for-sres.md" not in draft.text
    assert len(draft.text.split("\n")) <= MAX_LEAD_LINES


async def test_never_quotes_text_that_would_read_as_a_citation_marker() -> None:
    draft = await ExtractiveAnswerer().answer("Should I ignore the Back-off events?", EXCERPTS)

    assert all("[1];" not in c.quote for c in draft.citations)
    assert verify_draft(draft, EXCERPTS).problems == ()


async def test_sentence_shared_by_overlapping_chunks_is_quoted_once() -> None:
    tail = MITIGATION.split("\n\n")[-1]
    overlapping = (
        excerpt(1, MITIGATION, "kubernetes/KubePodCrashLooping", "Mitigation"),
        excerpt(2, tail + "\nCheck the ReplicaSet events afterwards.", "x/y", "Mitigation"),
    )
    draft = await ExtractiveAnswerer().answer("Should I delete the pods by hand?", overlapping)

    quotes = [c.quote for c in draft.citations]
    assert quotes.count(tail.strip()) == 1
    assert verify_draft(draft, overlapping).problems == ()


async def test_question_without_any_shared_term_is_not_in_sources() -> None:
    draft = await ExtractiveAnswerer().answer("Who approves vacation requests?", EXCERPTS)

    assert draft.status == "not_in_sources"
    assert draft.citations == ()
    assert verify_draft(draft, EXCERPTS).problems == ()


async def test_no_excerpts_is_not_in_sources() -> None:
    draft = await ExtractiveAnswerer().answer("How do I read the pod logs?", ())

    assert draft.status == "not_in_sources" and draft.citations == ()


def test_question_terms_keep_identifiers_exact_and_stem_plain_words() -> None:
    terms = question_terms("Is KubePodCrashLooping restarting pods? ERR in used_memory")

    assert {"kubepodcrashlooping", "err", "used_memory"} <= terms.keys()
    assert {"restart", "pod", "crash", "memory"} <= terms.keys()
    assert "is" not in terms and "in" not in terms
    assert terms["kubepodcrashlooping"] > terms["restart"]


async def test_identical_output_across_runs() -> None:
    question = "How do I find out why KubePodCrashLooping fires?"
    drafts = [await ExtractiveAnswerer().answer(question, EXCERPTS) for _ in range(3)]

    assert drafts[0] == drafts[1] == drafts[2]


@pytest.mark.slow  # starts three interpreters, each importing rag
def test_identical_output_across_processes_with_different_hash_seeds() -> None:
    # String hashing, and so set order, changes with the seed; the answer must not.
    script = (
        "import asyncio, json, sys\n"
        "from dataclasses import asdict\n"
        "from rag.answering.answerers.extractive import ExtractiveAnswerer\n"
        "from tests.test_extractive import EXCERPTS\n"
        "draft = asyncio.run(ExtractiveAnswerer().answer(sys.argv[1], EXCERPTS))\n"
        "print(json.dumps(asdict(draft)))\n"
    )
    question = "crash loop: restarts, logs, memory limit or deploy rollback?"
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, question],
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            stdout=subprocess.PIPE,
            text=True,
        )
        for seed in ("1", "2", "3")
    ]
    outputs = {run.communicate(timeout=60)[0] for run in runs}
    assert [run.returncode for run in runs] == [0, 0, 0]
    assert len(outputs) == 1
    assert json.loads(outputs.pop())["status"] == "answered"
