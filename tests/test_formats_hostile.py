"""Whatever bytes a file holds, every format's parser answers with a runbook or our own error."""

from __future__ import annotations

import pytest

from rag.errors import RunbookFormatError
from rag.formats import RUNBOOK_SUFFIXES, parse_document

# Every byte value once (NUL and the C0/C1 controls included), read as Latin-1, and text with a
# lone surrogate, which no encoder accepts.
HOSTILE = [
    bytes(range(256)).decode("latin-1") * 16,
    "<h2>x</h2>\x00 text\x00",
    "== x\n\ntext \ud800 more\n",
    "\ufeff" + "<" * 5000 + "[" * 5000 + "`" * 5000 + "&" * 5000,
]


@pytest.mark.parametrize("suffix", RUNBOOK_SUFFIXES)
@pytest.mark.parametrize("text", HOSTILE, ids=["bytes", "nul", "surrogate", "openers"])
def test_hostile_text_yields_a_runbook_or_a_format_error(suffix: str, text: str) -> None:
    try:
        runbook = parse_document(text, suffix=suffix, fallback_title="hostile")
    except RunbookFormatError as exc:
        assert exc.reason
        return
    assert runbook.sections
    assert all(section.text.strip() for section in runbook.sections)


def test_an_unknown_suffix_is_a_format_error() -> None:
    with pytest.raises(RunbookFormatError, match="no runbook reader for '.txt' files"):
        parse_document("text", suffix=".txt", fallback_title="x")
