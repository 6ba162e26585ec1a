"""AsciiDoc runbooks through our block reader, into the same sections as Markdown."""

from __future__ import annotations

import time

import pytest

from rag.errors import EmptyRunbookError, RunbookFormatError
from rag.formats import RUNBOOK_SUFFIXES, parse_document
from rag.formats.markdown import parse_runbook
from rag.formats.runbook import ParsedRunbook
from rag.ingest.chunking import chunk_runbook

RUNBOOK = """\
// a comment before the header
= Payments DB failover
Jane Doe <jane@example.com>
v1.2, 2025-01-01
:service: payments
:tags: db, failover
:owner: team-db
:cluster: payments-db

Intro with *bold*, _emphasis_, `code` and https://x.example/dash[the dashboard] on {cluster}.

== Diagnosis

NOTE: Check the replica lag first.

[WARNING]
====
Do not fail over blindly.
====

.Promote a replica
[source,bash]
----
patronictl failover --candidate payments-db-2 # not a heading
== not a heading either
----

=== Steps

. Drain the pool.
** one node at a time
. Promote:
+
----
kubectl get pods
----
. Check <<replication-lag,the lag>>.

[cols="1,2",options="header"]
|===
| Lag | Action
| < 1 MB | none
| > 64 MB | do not fail over
|===

include::/etc/hostname[]

Who: {sys:id -un}

== Rollback

Text.
"""


def adoc(text: str, *, fallback_title: str = "fallback") -> ParsedRunbook:
    return parse_document(text, suffix=".adoc", fallback_title=fallback_title)


def by_path(runbook: ParsedRunbook) -> dict[tuple[str, ...], str]:
    return {section.heading_path: section.text for section in runbook.sections}


def test_adoc_is_a_runbook_suffix() -> None:
    assert ".adoc" in RUNBOOK_SUFFIXES


def test_title_and_sections_nest_as_markdown_headings_would() -> None:
    runbook = adoc(RUNBOOK)
    assert runbook.title == "Payments DB failover"
    assert list(by_path(runbook)) == [
        ("Payments DB failover",),
        ("Payments DB failover", "Diagnosis"),
        ("Payments DB failover", "Diagnosis", "Steps"),
        ("Payments DB failover", "Rollback"),
    ]


def test_header_attributes_are_the_metadata_and_substitute_into_the_text() -> None:
    runbook = adoc(RUNBOOK)
    assert runbook.frontmatter.service == "payments"
    assert runbook.frontmatter.tags == ("db", "failover")
    assert runbook.frontmatter.owner == "team-db"
    assert by_path(runbook)[("Payments DB failover",)] == (
        "Intro with bold, emphasis, `code` and the dashboard on payments-db."
    )


def test_listing_blocks_stay_whole_with_their_title_and_admonitions_keep_their_label() -> None:
    assert by_path(adoc(RUNBOOK))[("Payments DB failover", "Diagnosis")] == (
        "Note: Check the replica lag first.\n\nWarning: Do not fail over blindly.\n\n"
        "Promote a replica\n\n```bash\npatronictl failover --candidate payments-db-2 "
        "# not a heading\n== not a heading either\n```"
    )


def test_lists_with_attached_blocks_and_tables_read_as_markdown_text() -> None:
    assert by_path(adoc(RUNBOOK))[("Payments DB failover", "Diagnosis", "Steps")] == (
        "1. Drain the pool.\n   - one node at a time\n2. Promote:\n\n```\nkubectl get pods\n```"
        "\n\n3. Check the lag.\n\n| Lag | Action |\n| --- | --- |\n| < 1 MB | none |\n"
        "| > 64 MB | do not fail over |\n\nWho: {sys:id -un}"
    )


def test_includes_are_never_read_and_system_attributes_never_run() -> None:
    text = "\n".join(by_path(adoc(RUNBOOK)).values())
    assert "include::" not in text
    assert "root" not in text


def test_heading_paths_are_rooted_exactly_as_markdown_roots_them() -> None:
    text = "== Check\n\nb\n\n=== Deeper\n\nc\n\n== Fix\n\nd\n"
    markdown = "## Check\n\nb\n\n### Deeper\n\nc\n\n## Fix\n\nd\n"
    assert [s.heading_path for s in adoc(text, fallback_title="x").sections] == [
        s.heading_path for s in parse_runbook(markdown, fallback_title="x").sections
    ]


def test_an_unclosed_listing_block_runs_to_the_end_as_in_asciidoctor() -> None:
    runbook = adoc("== Run\n\n----\nkubectl get pods\n== inside code\n")
    assert by_path(runbook) == {("fallback", "Run"): "```\nkubectl get pods\n== inside code\n```"}


def test_a_code_block_longer_than_a_chunk_is_cut_into_fenced_parts_only() -> None:
    lines = [f"helm upgrade api-{n} ./chart --set replicas={n}" for n in range(80)]
    runbook = adoc("= Deploy\n\n----\n" + "\n".join(lines) + "\n----\n")
    assert runbook.sections[0].text == "```\n" + "\n".join(lines) + "\n```"
    drafts = chunk_runbook(runbook, max_chars=400, overlap_chars=40)
    assert len(drafts) > 4 and all(d.content.startswith("```") for d in drafts)


@pytest.mark.parametrize(
    "text", ["", "\n \n", "// only a comment\n", ":service: x\n", "////\nblock comment\n////\n"]
)
def test_a_file_without_text_has_nothing_to_index(text: str) -> None:
    with pytest.raises(EmptyRunbookError):
        adoc(text)


def test_blocks_nested_past_the_recursion_limit_are_a_format_error() -> None:
    text = "".join("=" * (4 + depth) + "\n" for depth in range(1200)) + "deep\n"
    with pytest.raises(RunbookFormatError, match="nested too deeply"):
        adoc(text)


def test_unpaired_markup_on_a_megabyte_line_stays_linear() -> None:
    line = "*a _b `c [d <<e #f " * 50_000
    started = time.perf_counter()
    runbook = adoc("== Noise\n\n" + line + "\n")
    assert runbook.sections
    # About 1 s on a quiet machine; a quadratic pattern would take minutes.
    assert time.perf_counter() - started < 30
