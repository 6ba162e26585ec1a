"""The command line tells the truth: an unknown tenant is an error naming the known ones,
every option of ``runbook ask`` says what it does, ``runbook --help`` speaks to users, and an
abstention says what to do next instead of listing unrelated runbooks. Run as a user would
(a child process against the session's database)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from bot.core.owners.runbook_owners import set_default_owner
from rag import FastEmbedder, IngestReport, Settings, Store, ingest_limits, ingest_path
from tests.test_slack_cli import REPO, runbook

OFF_TOPIC = "who approves vacation requests for the payroll team?"


def test_ask_for_an_unknown_tenant_is_an_error_naming_the_known_tenants(
    database_url: str, acme_corpus: IngestReport
) -> None:
    done = runbook(
        "ask", "--tenant", "acmee", "how do I fail over?", env={"DATABASE_URL": database_url}
    )

    assert done.returncode == 2
    assert "unknown tenant 'acmee'" in done.stderr
    assert re.search(r"known tenants: .*\bacme\b", done.stderr)
    assert "No runbook" not in done.stdout


def test_gaps_for_an_unknown_tenant_is_an_error_not_an_empty_report(
    database_url: str, acme_corpus: IngestReport
) -> None:
    done = runbook("gaps", "--tenant", "acmee", env={"DATABASE_URL": database_url})

    assert done.returncode == 2
    assert "unknown tenant 'acmee'" in done.stderr and "acme" in done.stderr
    assert done.stdout == ""


def test_every_option_of_ask_has_help_text() -> None:
    done = runbook("ask", "--help")

    assert done.returncode == 0
    entries = _help_entries(done.stdout)
    assert {"--tenant", "--service", "--json", "--blocks", "--teams-card", "question"} <= set(
        entries
    )
    assert {name: text for name, text in entries.items() if not text} == {}


def test_runbook_help_speaks_to_users_and_names_only_files_the_project_has() -> None:
    done = runbook("--help")

    assert done.returncode == 0
    description = done.stdout.split("positional arguments:")[0]
    assert "runbook demo" in description and "runbook ask" in description
    assert "``" not in description  # no docstring markup
    named = re.findall(r"[\w./-]+\.(?:md|yml|yaml|toml|json|py)\b", done.stdout)
    assert [name for name in named if not (REPO / name).exists()] == []


async def test_an_abstention_gives_an_on_calls_next_steps_never_an_admin_command(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    database_url: str,
    unique_tenant: str,
    tmp_path: Path,
) -> None:
    shutil.copy(REPO / "corpus" / "acme" / "cache" / "redis-evictions.md", tmp_path)
    await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=ingest_limits(settings)
    )
    env = {"DATABASE_URL": database_url}

    unowned = runbook("ask", "--tenant", unique_tenant, OFF_TOPIC, env=env)
    await set_default_owner(store, unique_tenant, "#cache-oncall")
    owned = runbook("ask", "--tenant", unique_tenant, OFF_TOPIC, env=env)

    assert unowned.returncode == 0, unowned.stderr
    assert unowned.stdout.startswith("[abstained")
    assert "Evidence" not in unowned.stdout  # a near miss is never shown as evidence
    # A near miss is listed as not answering, with its owner, who is the first to ask.
    assert "Closest runbooks (not close enough to answer from):" in unowned.stdout
    assert "(redis-evictions) · owner team-platform" in unowned.stdout
    assert "Next: ask team-platform (owns the closest runbook)" in unowned.stdout
    assert "runbook owner" not in unowned.stdout  # an admin command is no next step at 3 am
    assert "ask again with the alert name or the service" in unowned.stdout
    assert owned.returncode == 0, owned.stderr
    assert f"or #cache-oncall (the {unique_tenant} runbooks' default owner)" in owned.stdout


def _help_entries(text: str) -> dict[str, str]:
    """Each argument of an argparse help page with its help text ("" when it has none)."""
    entries: dict[str, str] = {}
    name = ""
    for line in text.split("\n"):
        entry = re.match(r"  (-[\w-]+|--[\w-]+|\w+)(?:[ ,][^ ].*?)?(?:\s{2,}(.*))?$", line)
        if entry is not None and not line.startswith("   "):
            name = entry.group(1)
            entries[name] = (entry.group(2) or "").strip()
        elif name and line.startswith("    ") and line.strip():
            entries[name] = (entries[name] + " " + line.strip()).strip()
        elif not line.strip():
            name = ""
    return entries


def test_an_answer_piped_into_a_reader_that_left_ends_quietly(
    database_url: str, acme_corpus: IngestReport
) -> None:
    """``runbook ask … | head -0``: the reader is gone before the answer; exit 0, no traceback."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "RUNBOOK_"))}
    read, write = os.pipe()
    os.close(read)
    with subprocess.Popen(
        [sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main())"]
        + ["ask", "--tenant", "acme", "how do I fail over the payments database?"],
        cwd=REPO,
        env={**clean, "DATABASE_URL": database_url},
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        os.close(write)
        _, stderr = child.communicate(timeout=120)

    assert child.returncode == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
