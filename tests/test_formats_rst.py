"""reStructuredText runbooks through docutils, into the same sections as Markdown."""

from __future__ import annotations

import time

import pytest

from rag.errors import EmptyRunbookError, RunbookFormatError
from rag.formats import RUNBOOK_SUFFIXES, parse_document
from rag.formats.markdown import parse_runbook
from rag.formats.runbook import ParsedRunbook
from rag.ingest.chunking import chunk_runbook

RUNBOOK = """\
:service: payments
:tags: db, failover
:Owner: team-db

########################
 Payments DB failover
########################

Intro with ``inline code``, *emphasis*, a `link <https://x.example>`_,
:ref:`the restore runbook <db-restore>` and :kbd:`Ctrl-C`.

.. contents::

Diagnosis
=========

.. note:: Check the replica lag first.

   Then the primary.

Run this::

    psql -c 'select 1'
    # not a heading
    Heading inside code
    ===================

.. code-block:: bash
   :caption: Promote a replica

   patronictl failover --candidate payments-db-2

Steps
-----

1. Drain the pool.

   - one node at a time
   - then the next

2. Promote.

+--------+--------------+
| Lag    | Action       |
+========+==============+
| < 1 MB | none         |
+--------+--------------+

.. seealso::

   The `failover policy`_ page.

.. include:: /etc/hostname

.. raw:: html

   <b>raw html</b>

Rollback
========

Text.
"""


def rst(text: str, *, fallback_title: str = "fallback") -> ParsedRunbook:
    return parse_document(text, suffix=".rst", fallback_title=fallback_title)


def by_path(runbook: ParsedRunbook) -> dict[tuple[str, ...], str]:
    return {section.heading_path: section.text for section in runbook.sections}


def test_rst_is_a_runbook_suffix() -> None:
    assert ".rst" in RUNBOOK_SUFFIXES


def test_sections_of_any_adornment_nest_by_depth_under_the_first_title() -> None:
    runbook = rst(RUNBOOK)
    assert runbook.title == "Payments DB failover"
    assert list(by_path(runbook)) == [
        ("Payments DB failover",),
        ("Payments DB failover", "Diagnosis"),
        ("Payments DB failover", "Diagnosis", "Steps"),
        ("Payments DB failover", "Rollback"),
    ]


def test_the_opening_field_list_is_the_metadata_not_text() -> None:
    runbook = rst(RUNBOOK)
    assert runbook.frontmatter.service == "payments"
    assert runbook.frontmatter.tags == ("db", "failover")
    assert runbook.frontmatter.owner == "team-db"
    assert "payments" not in by_path(runbook)[("Payments DB failover",)]


def test_a_field_list_right_after_the_only_title_is_the_metadata_too() -> None:
    runbook = rst("Disk full\n=========\n\n:service: storage\n\nCheck ``df -h``.\n")
    assert runbook.frontmatter.service == "storage"
    assert by_path(runbook) == {("Disk full",): "Check `df -h`."}


def test_inline_markup_and_unknown_sphinx_roles_read_as_their_text() -> None:
    intro = by_path(rst(RUNBOOK))[("Payments DB failover",)]
    assert intro == (
        "Intro with `inline code`, emphasis, a link, the restore runbook and `Ctrl-C`."
    )


def test_code_blocks_stay_whole_and_headings_inside_them_are_code() -> None:
    diagnosis = by_path(rst(RUNBOOK))[("Payments DB failover", "Diagnosis")]
    assert diagnosis == (
        "Note: Check the replica lag first.\n\nThen the primary.\n\nRun this:\n\n"
        "```\npsql -c 'select 1'\n# not a heading\nHeading inside code\n===================\n```"
        "\n\nPromote a replica\n\n```bash\npatronictl failover --candidate payments-db-2\n```"
    )


def test_lists_tables_and_sphinx_directives_read_as_text_and_nothing_is_included() -> None:
    steps = by_path(rst(RUNBOOK))[("Payments DB failover", "Diagnosis", "Steps")]
    assert steps == (
        "1. Drain the pool.\n   - one node at a time\n   - then the next\n2. Promote.\n\n"
        "| Lag | Action |\n| --- | --- |\n| < 1 MB | none |\n\nThe failover policy page."
    )
    text = "\n".join(by_path(rst(RUNBOOK)).values())
    assert "raw html" not in text and "hostname" not in text and "Contents" not in text


def test_heading_paths_are_rooted_exactly_as_markdown_roots_them() -> None:
    text = "Check\n=====\n\nb\n\nDeeper\n------\n\nc\n\nFix\n===\n\nd\n"
    markdown = "# Check\n\nb\n\n## Deeper\n\nc\n\n# Fix\n\nd\n"
    from_rst = rst(text, fallback_title="x")
    from_markdown = parse_runbook(markdown, fallback_title="x")
    assert [s.heading_path for s in from_rst.sections] == [
        s.heading_path for s in from_markdown.sections
    ]
    untitled = rst("just a paragraph\n", fallback_title="x")
    assert [s.heading_path for s in untitled.sections] == [()]
    assert untitled.title == "x" and not untitled.has_headings


def test_a_code_block_longer_than_a_chunk_is_cut_into_fenced_parts_only() -> None:
    lines = [f"kubectl rollout restart deploy/api-{n} && sleep {n}" for n in range(80)]
    text = "Deploy\n======\n\n::\n\n" + "".join(f"    {line}\n" for line in lines)
    runbook = rst(text)
    assert runbook.sections[0].text == "```\n" + "\n".join(lines) + "\n```"
    drafts = chunk_runbook(runbook, max_chars=400, overlap_chars=40)
    assert len(drafts) > 4 and all(d.content.startswith("```") for d in drafts)


@pytest.mark.parametrize("text", ["", "\n\n  \n", ".. a comment only\n", ".. _target:\n"])
def test_a_file_without_text_has_nothing_to_index(text: str) -> None:
    with pytest.raises(EmptyRunbookError):
        rst(text)


def test_broken_markup_still_reads() -> None:
    runbook = rst(
        "Title\n=====\n\n* unclosed *emphasis and ``literal\n\nToo short\n===\n\n"
        "Body |undefined| ref_ and `missing target`_.\n\n.. unknown-directive:: x\n\n   Kept.\n"
    )
    text = "\n".join(section.text for section in runbook.sections)
    assert "unclosed *emphasis" in text
    assert "Body |undefined| ref and missing target." in text
    assert "Kept." in text
    assert "Unknown directive" not in text and "ERROR" not in text


def test_nesting_past_the_recursion_limit_is_a_format_error_not_a_crash() -> None:
    text = "".join("  " * depth + "- item\n\n" for depth in range(400))
    with pytest.raises(RunbookFormatError, match="unreadable reStructuredText"):
        rst(text)


def test_control_characters_are_read_as_text() -> None:
    noise = bytes(range(1, 128)).decode("ascii") * 20
    [section] = rst(noise).sections
    assert "0123456789" in section.text


def test_a_large_file_parses_within_a_bound() -> None:
    text = "".join(
        f"Depot {n}\n{'=' * 12}\n\nCut-off is 02:{n % 60:02d}.\n\n::\n\n    echo {n}\n\n"
        for n in range(2000)
    )
    assert len(text) > 100_000
    started = time.perf_counter()
    runbook = rst(text)
    assert len(runbook.sections) == 2000
    # docutils is not fast (about 2 s for this on a quiet machine); the bound catches a hang.
    assert time.perf_counter() - started < 90
