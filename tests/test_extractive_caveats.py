"""A quoted step carries the restriction that follows it in the runbook, or is not shown; a
command that uses a variable set earlier in its runbook is shown with that assignment. Texts are
the demo corpus's own (corpus/globex)."""

from __future__ import annotations

from rag.answering.answerers import ExtractiveAnswerer
from rag.answering.answerers._passages import cut_passages
from rag.answering.answerers.caveats import caveat_after, restricts
from rag.answering.verify import verify_draft
from tests.test_extractive import excerpt

STOP_THE_NOISE = """\
If the crashing workload is non-critical and you need time, scale it to zero and say so in the
incident channel. Never scale to zero anything in `ledger`, `payments` or `auth` without the
owning team.
"""
OOM_DIAGNOSIS = """\
An OOM kill means the container used more memory than its limit. Check the last termination
reason of the crashing workload with `kubectl describe pod` before you change anything.
"""
STEP = "scale it to zero and say so in the incident channel."
CAVEAT = "Never scale to zero anything in `ledger`, `payments` or `auth` without the owning team."

REDIS_DIAGNOSIS = """\
Connect from the `platform-tools` pod (TLS and AUTH are mandatory):

```bash
kubectl -n platform exec -it deploy/platform-tools -- bash

R="redis-cli --tls -h master.globex-sessions.x1y2z3.euw1.cache.amazonaws.com -p 6379"

$R INFO memory | grep -E 'used_memory_human|maxmemory_human|maxmemory_policy'
```
"""
TOO_MANY_CLIENTS = """\
`ERR max number of clients reached` almost always comes from a connection leak in one service,
not from real load. Group the clients by source address:

```bash
$R CLIENT LIST | awk '{print $2}' | cut -d= -f2 | cut -d: -f1 | sort | uniq -c | sort -rn | head
```
"""
ASSIGNMENT = 'R="redis-cli --tls -h master.globex-sessions.x1y2z3.euw1.cache.amazonaws.com -p 6379"'


def test_restrictions_are_told_from_ordinary_next_steps() -> None:
    assert restricts(CAVEAT)
    assert restricts("Do **not** change `maxmemory-policy` to an eviction policy.")
    assert restricts("Only during a P1 and with the release manager informed.")
    assert restricts("Roll back, unless the release fixed a data bug.")
    assert not restricts("Then ask the owning team to fix the client pool size.")
    assert not restricts("The connections are freed as its pods terminate.")


def test_the_sentence_after_a_step_is_its_caveat_only_when_it_restricts_it() -> None:
    passages = cut_passages(STOP_THE_NOISE)
    step = next(p for p in passages if p.text.endswith("incident channel."))

    caveat = caveat_after(STOP_THE_NOISE, step)

    assert caveat is not None and caveat.text == CAVEAT
    assert caveat_after(STOP_THE_NOISE, caveat) is None


async def test_an_also_see_step_carries_the_restriction_the_runbook_puts_after_it() -> None:
    excerpts = (
        excerpt(1, OOM_DIAGNOSIS, "kubernetes/OOMKilled", "Diagnosis"),
        excerpt(2, STOP_THE_NOISE, "kubernetes/KubePodCrashLooping", "Stop the noise"),
    )
    question = "the crashing workload is non-critical, can I scale it to zero for now?"

    draft = await ExtractiveAnswerer().answer(question, excerpts)

    line = next(line for line in draft.text.split("\n") if STEP in line)
    assert line.startswith("Also see *KubePodCrashLooping › Stop the noise*:")
    assert line.endswith(f"{STEP} [2] {CAVEAT} [2]")
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.dropped == ()
    assert CAVEAT in verification.text


async def test_a_step_whose_restriction_cannot_be_quoted_alone_is_not_an_also_see_line() -> None:
    long_caveat = STOP_THE_NOISE.replace(
        "without the\nowning team.",
        "without the owning team, " + "and their service owners must agree first, " * 10 + ".",
    )
    excerpts = (
        excerpt(1, OOM_DIAGNOSIS, "kubernetes/OOMKilled", "Diagnosis"),
        excerpt(2, long_caveat, "kubernetes/KubePodCrashLooping", "Stop the noise"),
    )
    question = "the crashing workload is non-critical, can I scale it to zero for now?"

    draft = await ExtractiveAnswerer().answer(question, excerpts)

    assert STEP not in draft.text


async def test_a_command_using_a_variable_set_earlier_is_shown_with_its_assignment() -> None:
    excerpts = (
        excerpt(1, TOO_MANY_CLIENTS, "cache/redis-memory", "Too many clients"),
        excerpt(2, REDIS_DIAGNOSIS, "cache/redis-memory", "Diagnosis"),
    )
    question = "ERR max number of clients reached: how do I group the clients by source address?"

    draft = await ExtractiveAnswerer().answer(question, excerpts)

    text = draft.text
    assert "$R CLIENT LIST" in text
    setup = f"With `R` set as in *redis-memory › Diagnosis*:\n```\n{ASSIGNMENT}\n```\n[2]"
    assert setup in text and text.index(setup) < text.index("$R CLIENT LIST")
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.dropped == ()
    assert ASSIGNMENT in verification.text


async def test_a_lead_cut_by_the_line_cap_still_ends_with_the_restriction_after_its_steps() -> None:
    block = "\n".join(f"redis-cli -h cache-{i} CONFIG GET maxmemory" for i in range(6))
    content = (
        "1. Check the memory limit on every cache node first:\n\n   ```bash\n"
        + "\n".join(f"   {line}" for line in block.split("\n"))
        + "\n   ```\n\n2. Raise the memory limit on every cache node by a quarter:\n\n   ```bash\n"
        + "\n".join(
            f"   {line.replace('GET maxmemory', 'SET maxmemory 8gb')}" for line in block.split("\n")
        )
        + "\n   ```\n\nNever raise it past the node's memory without the owning team.\n"
    )
    excerpts = (excerpt(1, content, "cache/redis-memory", "Relieve memory pressure"),)

    draft = await ExtractiveAnswerer().answer("how do I raise the redis memory limit?", excerpts)

    assert "Raise the memory limit on every cache node by a quarter:" in draft.text
    assert draft.text.rstrip().endswith(
        "Never raise it past the node's memory without the owning team. [1]"
    )
    verification = verify_draft(draft, excerpts)
    assert verification.problems == () and verification.dropped == ()
