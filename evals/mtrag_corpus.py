"""Turn the MT-RAG IBM Cloud passages into a tenant corpus of Markdown files, one per passage.

The benchmark ships each passage as plain text cut from an IBM Cloud docs page; its headings
survive only as short lines ending in spaces (`` Step 2: Running a simple query ``) between
blank lines (the first heading of a passage often lacks the leading space). Each passage becomes
``corpus/<passage id>.md``, so its document id is the benchmark's passage id, the id the qrels
and task contexts use: a ``#`` title (the first such heading line or, without one, the passage's
opening words), then the text with heading lines as ``##``.

Passages of one page are not merged: their offsets do not line up with their texts, so the
overlap between neighbours cannot be removed reliably.

Deterministic: ``python evals/mtrag_corpus.py`` rewrites the same files byte for byte.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

COLLECTION = Path(__file__).resolve().parent / "collections/mt-rag-cloud"
PASSAGES = COLLECTION / "source/cloud_passages_available.jsonl"
CORPUS = COLLECTION / "corpus"

_HEADING_LINE = re.compile(r" *(?P<text>\S.{0,119}?) +")
# Characters that would make plain text read as Markdown structure at the start of a line.
_MARKDOWN_LINE_START = re.compile(r"^(?=#|=+\s*$|-{3,}\s*$|>)")
_TITLE_WORDS = 10


def heading_of(lines: list[str], index: int) -> str | None:
    """A heading line: short, ends in spaces, alone between blank lines (table rows are not)."""
    match = _HEADING_LINE.fullmatch(lines[index])
    if match is None:
        return None
    before_blank = index == 0 or not lines[index - 1].strip()
    after_blank = index + 1 == len(lines) or not lines[index + 1].strip()
    return match["text"] if before_blank and after_blank else None


def to_markdown(text: str) -> str:
    lines = text.strip("\n").split("\n")
    headings = [heading_of(lines, i) for i in range(len(lines))]
    title = next((h for h in headings if h), None)
    if title is None:
        title = " ".join(text.split()[:_TITLE_WORDS])
    body: list[str] = []
    for index, (line, heading) in enumerate(zip(lines, headings, strict=True)):
        if heading is not None:
            # The title already opens the file when the passage starts with its heading.
            if not (heading == title and not any(line.strip() for line in lines[:index])):
                body.append(f"## {heading}")
        else:
            body.append(_MARKDOWN_LINE_START.sub("\\\\", line.rstrip()))
    text_out = re.sub(r"\n{3,}", "\n\n", "\n".join(body)).strip("\n")
    return f"# {title}\n\n{text_out}\n"


def main() -> None:
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    CORPUS.mkdir(parents=True)
    count = 0
    for line in PASSAGES.read_text(encoding="utf-8").splitlines():
        passage = json.loads(line)
        (CORPUS / f"{passage['_id']}.md").write_text(to_markdown(passage["text"]), encoding="utf-8")
        count += 1
    print(f"wrote {count} documents to {CORPUS.relative_to(Path.cwd())}")


if __name__ == "__main__":
    main()
