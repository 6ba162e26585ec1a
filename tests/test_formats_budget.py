"""Every format reads a hostile file within a CPU-time and output-size budget: AsciiDoc attribute
expansion is bounded, and no inline pattern rescans a long word or paragraph once per position.

The budgets are CPU seconds of this process (not wall time), generous for a loaded 2-core
machine and far below what the files cost before (each case says how much).
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.errors import RunbookFormatError
from rag.formats import parse_confluence_storage, parse_document
from rag.formats.runbook import ParsedRunbook

CPU_SECONDS_PER_FILE = 2.0
# What a file may become, in characters of section text: AsciiDoc expansion may add three
# times the file (with a 64,000 floor); no other format adds more than its own markup.
GROWTH_FACTOR = 4
GROWTH_FLOOR = 100_000


def read(text: str, suffix: str) -> ParsedRunbook | RunbookFormatError:
    if suffix == "confluence":
        return parse_confluence_storage(text, title="Page")
    return parse_document(text, suffix=suffix, fallback_title="hostile")


_WARMED: set[str] = set()


def read_within_budget(text: str, suffix: str) -> ParsedRunbook | RunbookFormatError:
    if suffix not in _WARMED:
        # A reader's first use imports and compiles its parser: a cost of the process, not of
        # the file (it made a 100 KB Markdown file measure 2.4 s once, 0.1 s ever after).
        read("Runbook\n\n## Steps\n\nRestart the pod and check the logs.\n", suffix)
        _WARMED.add(suffix)
    started = time.process_time()
    try:
        result: ParsedRunbook | RunbookFormatError = read(text, suffix)
    except RunbookFormatError as exc:
        assert exc.reason
        result = exc
    spent = time.process_time() - started
    assert spent < CPU_SECONDS_PER_FILE, f"{suffix}: {spent:.2f} s of CPU for {len(text)} chars"
    if not isinstance(result, RunbookFormatError):
        size = sum(len(section.text) for section in result.sections)
        assert size <= GROWTH_FACTOR * len(text) + GROWTH_FLOOR
    return result


def explosive_adoc(value_chars: int, references: int) -> str:
    """A short value-holding attribute referenced many times on one line: 1.6 KB made 11.8 s of
    CPU and a 200 KB paragraph; 10 KB made 402 s."""
    return f":a: {'x' * value_chars}\n\n= Runbook\n\n== Steps\n\n{'{a}' * references}\n"


@pytest.mark.parametrize(
    ("value_chars", "references"), [(1_000, 200), (5_000, 1_700), (50_000, 17_000)]
)
def test_attribute_references_expanding_past_the_budget_make_the_file_a_format_error(
    value_chars: int, references: int
) -> None:
    result = read_within_budget(explosive_adoc(value_chars, references), ".adoc")
    assert isinstance(result, RunbookFormatError)
    assert "attribute references expand to more than" in result.reason


def test_nested_attribute_references_expand_as_asciidoctor_does_within_the_budget() -> None:
    text = ":a: ab\n:b: {a}-{a}\n\n= Runbook\n\nValue {b}.\n"
    result = read_within_budget(text, ".adoc")
    assert isinstance(result, ParsedRunbook)
    assert result.sections[0].text == "Value ab-ab."


def test_a_chain_of_doubling_attributes_is_refused_before_it_is_built() -> None:
    chain = (
        ":a0: "
        + "x" * 64
        + "\n"
        + "".join(f":a{i}: {{a{i - 1}}}{{a{i - 1}}}\n" for i in range(1, 60))
    )
    result = read_within_budget(chain + "\n= Runbook\n\n{a59}\n", ".adoc")
    assert isinstance(result, RunbookFormatError)
    assert "attribute references expand" in result.reason


@pytest.mark.parametrize("before", ["", "link:", "xref:", "image:", "menu:"])
def test_a_100_kb_word_before_a_bracket_is_read_in_linear_time(before: str) -> None:
    # The URL macro's pattern took 2.3 s on a 50 KB word (4.6 s for 100 KB) before.
    word = before + ("x" + before) * (100_000 // (len(before) + 1))
    result = read_within_budget(f"= Runbook\n\n{word}[label] and text\n", ".adoc")
    assert isinstance(result, ParsedRunbook)
    assert "and text" in result.sections[0].text


@pytest.mark.parametrize("unit", ["`x\n", "*x\n", "``x\n", "a_ b_\n", "`a`_\n"])
def test_a_paragraph_of_unpaired_rst_markup_is_read_in_linear_time(unit: str) -> None:
    # 100 KB of "`x" lines took 45 s in docutils and 8,000 dangling references 19 s.
    result = read_within_budget("Runbook\n=======\n\n" + unit * (100_000 // len(unit)), ".rst")
    assert isinstance(result, ParsedRunbook)


@pytest.mark.parametrize(
    "line",
    [
        "= a" + " " * 20_000 + "b",
        "== a" + " " * 20_000 + "b",
        "image::" + "[" * 20_000,
        "*x " * 30_000,
        "**x " * 30_000,
        "kbd:[" * 20_000,
        "[[" * 50_000,
        "a[" * 50_000,
    ],
)
def test_an_adoc_line_of_one_repeated_opener_is_read_in_linear_time(line: str) -> None:
    read_within_budget(f"= Runbook\n\n{line}\n\ntext\n", ".adoc")


_PIECES = {
    ".md": ["# ", "\n", "<!--", "-->", "`", "```", "[", "](", ")", "*", "_", "<div>", "x ", "{{<"],
    ".rst": ["\n", "`", "``", "*", "_", "|", ":r:`", "<", ">`_", "..", "\n\n", "x ", "===\n"],
    ".adoc": [
        "\n", ":a: {a}{a}\n", "{a}", "link:", "xref:", "[", "]", "*", "_", "#", "`", "<<", "x ",
        "////\n", "[comment]\n", "|===\n", "| ", "== ",
    ],
    ".html": ["<p>", "</p>", "<!--", "-->", "<div hidden>", "<h2>", "<table>", "<td>", "x ", "&"],
    "confluence": [
        "<p>", '<ac:structured-macro ac:name="code">', "<ac:plain-text-body><![CDATA[", "]]>",
        '<ac:parameter ac:name="hidden">true</ac:parameter>', "<ac:rich-text-body>", "x ", "<h1>",
    ],
}  # fmt: skip


@settings(
    database=None,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    suffix=st.sampled_from(sorted(_PIECES)),
    data=st.data(),
    size=st.sampled_from([2_000, 20_000, 100_000]),
)
def test_any_mix_of_each_formats_markup_is_read_within_the_budget(
    suffix: str, data: st.DataObject, size: int
) -> None:
    unit = "".join(data.draw(st.lists(st.sampled_from(_PIECES[suffix]), min_size=1, max_size=10)))
    read_within_budget("Runbook\n\n" + unit * (size // len(unit) + 1), suffix)
