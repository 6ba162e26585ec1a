"""HTML runbook files read into the same sections as Markdown, hostile markup included."""

from __future__ import annotations

import re
import time

import pytest

from rag.errors import EmptyRunbookError, RunbookFormatError
from rag.formats import RUNBOOK_SUFFIXES, parse_document
from rag.formats.markdown import parse_runbook
from rag.formats.runbook import ParsedRunbook
from rag.ingest.chunking import chunk_runbook


def html(text: str, *, fallback_title: str = "fallback") -> ParsedRunbook:
    return parse_document(text, suffix=".html", fallback_title=fallback_title)


def paths(runbook: ParsedRunbook) -> list[tuple[str, ...]]:
    return [section.heading_path for section in runbook.sections]


def test_html_and_markdown_suffixes_are_runbooks() -> None:
    assert {".md", ".html", ".htm", ".markdown"} <= set(RUNBOOK_SUFFIXES)
    assert RUNBOOK_SUFFIXES[0] == ".md"


@pytest.mark.parametrize(
    ("page", "markdown"),
    [
        (
            "<p>lead</p><h1>Disk full</h1><p>a</p><h2>Check</h2><p>b</p><h4>Deep</h4><p>c</p>"
            "<h2>Fix</h2><p>d</p><h1>Second</h1><p>e</p><h3>Under</h3><p>f</p>",
            "lead\n\n# Disk full\n\na\n\n## Check\n\nb\n\n#### Deep\n\nc\n\n## Fix\n\nd\n\n"
            "# Second\n\ne\n\n### Under\n\nf\n",
        ),
        (
            "<h2>Check</h2><p>b</p><h3>Deeper</h3><p>c</p><h2>Fix</h2><p>d</p>",
            "## Check\n\nb\n\n### Deeper\n\nc\n\n## Fix\n\nd\n",
        ),
        ("<p>no headings at all</p>", "no headings at all\n"),
    ],
)
def test_heading_paths_are_rooted_exactly_as_markdown_roots_them(page: str, markdown: str) -> None:
    from_html = html(page, fallback_title="disk-full")
    from_markdown = parse_runbook(markdown, fallback_title="disk-full")
    assert paths(from_html) == paths(from_markdown)
    assert from_html.title == from_markdown.title
    assert from_html.has_headings == from_markdown.has_headings


def test_title_and_meta_tags_are_the_metadata_and_the_head_is_no_text() -> None:
    runbook = html(
        "<!DOCTYPE html><html><head><title>Disk full &amp; slow</title>"
        '<meta name="service" content="storage"><meta name="tags" content="disk, node">'
        '<meta name="owner" content="team-infra"><meta name="viewport" content="width=1">'
        "<style>h2 { color: red }</style><script>var x = '<h2>no</h2>'</script></head>"
        "<body><h2>Check</h2><p>Run df.</p></body></html>"
    )
    assert runbook.title == "Disk full & slow"
    assert runbook.frontmatter.service == "storage"
    assert runbook.frontmatter.tags == ("disk", "node")
    assert runbook.frontmatter.owner == "team-infra"
    assert paths(runbook) == [("Disk full & slow", "Check")]
    assert runbook.sections[0].text == "Run df."


def test_a_pre_block_is_one_fenced_block_with_its_language_and_markup_inside_kept_as_text() -> None:
    code = "# not a heading\n## nor this\n  indented()\n```\nbackticks inside\n"
    runbook = html(
        '<h2>Run</h2><p>Then:</p><pre class="language-bash"><code># not a heading\n'
        "## nor this\n  indented()\n```\nbackticks inside\n</code></pre><p>Done &lt;ok&gt;.</p>"
    )
    [section] = runbook.sections
    assert section.text == f"Then:\n\n````bash\n{code.rstrip()}\n````\n\nDone <ok>."


def test_a_code_block_longer_than_a_chunk_is_cut_into_fenced_parts_only() -> None:
    lines = [f"echo step-{n} && kubectl rollout status deploy/api-{n}" for n in range(60)]
    runbook = html("<h1>Deploy</h1><h2>Roll</h2><pre>" + "\n".join(lines) + "</pre>")
    [section] = runbook.sections
    assert section.text == "```\n" + "\n".join(lines) + "\n```"
    drafts = chunk_runbook(runbook, max_chars=500, overlap_chars=50)
    assert len(drafts) > 3
    assert all(d.content.startswith("```\n") and d.content.endswith("\n```") for d in drafts)
    assert [line for d in drafts for line in d.content.split("\n")[1:-1]] == lines


def test_lists_tables_and_definition_lists_read_as_markdown_text() -> None:
    runbook = html(
        "<h2>Steps</h2><ol><li>Drain<ul><li>one node</li><li>then the next</li></ul></li>"
        "<li><p>Wait</p><p>for the pods</p></li></ol>"
        "<table><caption>Limits</caption><thead><tr><th>Lag</th><th>Action</th></tr></thead>"
        "<tbody><tr><td>&lt; 1 MB</td><td>none | ignore</td></tr>"
        "<tr><td><code>64 MB</code></td><td><p>page</p><p>the DBA</p></td></tr></tbody></table>"
    )
    [section] = runbook.sections
    assert section.text == (
        "1. Drain\n   - one node\n   - then the next\n2. Wait\n   for the pods\n\nLimits\n\n"
        "| Lag | Action |\n| --- | --- |\n| < 1 MB | none \\| ignore |\n| `64 MB` | page the DBA |"
    )


def test_broken_markup_is_read_leniently_in_document_order() -> None:
    runbook = html(
        "<h2>Symptoms</h2><p>Errors & timeouts<br>on <strong>every pod</p>"
        "<ul><li>first<li>second</ul></div></span><h2>Fix <em>now</h2><p>Restart &nbsp;it"
        "<h3></h3><p>Tail &bogus; entity"
    )
    assert paths(runbook) == [("fallback", "Symptoms"), ("fallback", "Fix now")]
    assert runbook.sections[0].text == "Errors & timeouts\non every pod\n\n- first\n- second"
    assert runbook.sections[1].text == "Restart it\n\nTail &bogus; entity"


def test_a_heading_swallowed_by_an_unclosed_inline_tag_still_starts_a_section() -> None:
    runbook = html("<h2>A</h2><p>text <strong>bold<h2>B</h2><p>after</p>")
    assert paths(runbook) == [("fallback", "A"), ("fallback", "B")]
    assert [s.text for s in runbook.sections] == ["text bold", "after"]


def test_prose_that_looks_like_markdown_structure_is_escaped() -> None:
    [section] = html("<h2>X</h2><p>```</p><p># not a heading</p><p>#channel</p>").sections
    assert section.text == "\\```\n\n\\# not a heading\n\n#channel"
    assert chunk_runbook(
        html("<h2>X</h2><p>```</p><p>" + "word " * 200 + "</p>"), max_chars=300, overlap_chars=0
    )


@pytest.mark.parametrize(
    "page",
    ["", "   \n\t", "<html><head><title>T</title></head><body></body></html>", "<img src=x>"],
)
def test_a_page_without_text_has_nothing_to_index(page: str) -> None:
    with pytest.raises(EmptyRunbookError):
        html(page)


def test_headings_without_any_text_under_them_are_a_format_error() -> None:
    with pytest.raises(RunbookFormatError, match="no text under any heading"):
        html("<h1>Only</h1><h2>headings</h2>")


def test_markup_nested_past_the_parser_limit_is_a_format_error() -> None:
    with pytest.raises(RunbookFormatError, match="unreadable HTML"):
        html("<div>" * 5000 + "deep" + "</div>" * 5000)


def test_control_characters_and_an_xml_declaration_do_not_stop_the_parser() -> None:
    runbook = html('<?xml version="1.0" encoding="UTF-8"?><h2>Odd</h2><p>a\x01b\x1fc \ufffd</p>')
    assert paths(runbook) == [("fallback", "Odd")]
    assert "c" in runbook.sections[0].text


def test_a_two_megabyte_page_parses_in_linear_time() -> None:
    section = "<h2>Depot {n}</h2><p>Cut-off is 02:{n:02d} &amp; later.</p><pre>echo {n}</pre>"
    page = "".join(section.format(n=n % 60) for n in range(30_000))
    assert len(page) > 2_000_000
    started = time.perf_counter()
    runbook = html(page)
    assert len(runbook.sections) == 30_000
    # About 1 s on a quiet machine; the bound catches quadratic behaviour, not noise.
    assert time.perf_counter() - started < 30


def test_no_tag_of_the_source_survives_in_the_text() -> None:
    runbook = html(
        '<h2>Links</h2><p>See <a href="https://x.example/a?b=1&amp;c=2">the dashboard</a>, '
        '<img src="x.png" alt="graph"> <time datetime="2025-01-02"></time> '
        "<kbd>Ctrl</kbd>+<kbd>C</kbd> <span>and</span> <abbr>SLO</abbr>.</p>"
        "<details><summary>More</summary><p>hidden text</p></details><hr><nav>menu</nav>"
    )
    [section] = runbook.sections
    assert (
        section.text == "See the dashboard, 2025-01-02 `Ctrl`+`C` and SLO.\n\nMore\n\nhidden text"
    )
    assert not re.search(r"<[a-z/]", section.text)
