from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from rag.errors import RunbookFormatError
from rag.formats.markdown import parse_runbook
from rag.formats.runbook import ChunkDraft, Frontmatter, ParsedRunbook, Section
from rag.ingest.chunking import MIN_CHUNK_CHARS, chunk_runbook

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "external"
COLLECTIONS = ("prometheus-operator-runbooks", "openshift-runbooks", "gitlab-com-runbooks")
MAX_CHARS, OVERLAP_CHARS = 1500, 150
FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.MULTILINE)
COMMONMARK = MarkdownIt("commonmark")


def runbook_of(*texts: str) -> ParsedRunbook:
    sections = tuple(Section(heading_path=("T", f"S{i}"), text=t) for i, t in enumerate(texts))
    return ParsedRunbook(frontmatter=Frontmatter(), title="T", sections=sections, has_headings=True)


def chunk(text: str, *, max_chars: int = 300, overlap_chars: int = 60) -> list[str]:
    drafts = chunk_runbook(runbook_of(text), max_chars=max_chars, overlap_chars=overlap_chars)
    return [draft.content for draft in drafts]


def shared_prefix(previous: str, following: str) -> str:
    """The longest start of ``following`` that ``previous`` ends with: the overlap."""
    lengths = [n for n in range(1, len(following) + 1) if previous.endswith(following[:n])]
    return following[: max(lengths, default=0)]


def sentences(count: int, *, words: int = 8, first: int = 0) -> str:
    return " ".join(
        f"Sentence {i} " + " ".join(f"word{i}x{j}" for j in range(words)) + "."
        for i in range(first, first + count)
    )


def test_a_section_that_fits_is_one_chunk_with_its_text_verbatim() -> None:
    text = "Check the disk.\n\n- run `df -h`\n- delete old logs\n\n```bash\ndf -h\n```"
    assert chunk(text) == [text]


def test_a_long_section_splits_on_paragraphs_and_every_part_is_within_max() -> None:
    paragraphs = [sentences(2, first=2 * n) for n in range(8)]
    text = "\n\n".join(paragraphs)
    chunks = chunk(text, max_chars=300, overlap_chars=60)
    assert len(chunks) > 1
    assert all(len(c) <= 300 for c in chunks)
    assert all(c in text for c in chunks)
    assert all(any(p in c for c in chunks) for p in paragraphs)


def test_each_following_part_opens_with_a_sentence_from_the_end_of_the_previous_part() -> None:
    text = "\n\n".join(sentences(3, words=6, first=3 * n) for n in range(6))
    chunks = chunk(text, max_chars=300, overlap_chars=80)
    assert len(chunks) > 2
    for previous, following in zip(chunks, chunks[1:], strict=False):
        overlap = shared_prefix(previous, following)
        assert 0 < len(overlap) <= 80
        assert overlap.startswith("Sentence ")
        assert len(following) <= 300


def test_without_overlap_the_parts_reassemble_the_section() -> None:
    text = "\n\n".join(sentences(2, first=2 * n) for n in range(8))
    chunks = chunk(text, max_chars=300, overlap_chars=0)
    assert "\n\n".join(chunks) == text


def test_a_long_paragraph_without_blank_lines_splits_at_sentence_ends() -> None:
    text = sentences(20)
    chunks = chunk(text, max_chars=300, overlap_chars=0)
    assert len(chunks) > 1
    assert all(c.startswith("Sentence ") and c.endswith(".") for c in chunks)
    assert " ".join(chunks) == text


def test_a_word_longer_than_max_is_cut_so_that_no_chunk_exceeds_max() -> None:
    text = "x" * 1000
    chunks = chunk(text, max_chars=120, overlap_chars=30)
    assert all(len(c) <= 120 for c in chunks)
    assert "".join(chunks) == text


def test_a_code_fence_that_fits_is_kept_whole() -> None:
    fence = "```bash\n" + "\n".join(f"kubectl get pods -n ns{i}" for i in range(8)) + "\n```"
    text = f"{sentences(3)}\n\n{fence}\n\n{sentences(3)}"
    chunks = chunk(text, max_chars=300, overlap_chars=60)
    assert len(chunks) > 1
    assert sum(fence in c for c in chunks) == 1


def test_a_lead_in_line_stays_with_the_code_block_it_introduces() -> None:
    paragraph = sentences(3)[:240]
    fence = "```bash\n" + "\n".join(f"kubectl drain node-{i}" for i in range(8)) + "\n```"
    chunks = chunk(f"{paragraph}\n\nRun:\n\n{fence}", max_chars=300, overlap_chars=0)
    assert chunks == [paragraph, f"Run:\n\n{fence}"]


def fence_contents(markdown: str) -> list[tuple[str, str]]:
    return [(t.info, t.content) for t in COMMONMARK.parse(markdown) if t.type == "fence"]


@pytest.mark.parametrize("closing", ["\n```", ""], ids=["closed", "unclosed"])
def test_a_giant_code_block_is_split_into_parts_that_each_render_as_one_fence(
    closing: str,
) -> None:
    code = "\n".join(f"echo step {i}  # restart shard {i}" for i in range(120))
    text = f"Restart every shard:\n\n```bash\n{code}{closing}"
    chunks = chunk(text, max_chars=300, overlap_chars=60)
    assert len(chunks) > 5
    assert chunks[0].startswith("Restart every shard:\n\n```bash\n")
    parts = [fence_contents(c) for c in chunks]
    assert all(len(p) == 1 and p[0][0] == "bash" for p in parts)
    assert all(len(c) <= 300 and c.endswith("\n```") for c in chunks)
    assert "".join(p[0][1] for p in parts) == code + "\n"


def test_a_code_line_longer_than_max_is_cut_inside_fenced_parts() -> None:
    line = "curl -H 'Authorization: none' " + "a" * 500
    chunks = chunk(f"```\n{line}\n```", max_chars=200, overlap_chars=40)
    assert all(len(c) <= 200 for c in chunks)
    assert (
        "".join(content for c in chunks for _, content in fence_contents(c)).replace("\n", "")
        == line
    )


def test_no_chunk_straddles_two_sections() -> None:
    texts = [sentences(12).replace("word", f"s{n}w") for n in range(3)]
    runbook = runbook_of(*texts)
    drafts = chunk_runbook(runbook, max_chars=300, overlap_chars=60)
    by_path = {section.heading_path: section.text for section in runbook.sections}
    assert [d.heading_path for d in drafts] == sorted(d.heading_path for d in drafts)
    assert {d.heading_path for d in drafts} == set(by_path)
    assert all(d.content in by_path[d.heading_path] for d in drafts)


def test_ordinals_run_from_zero_in_document_order() -> None:
    drafts = chunk_runbook(
        runbook_of(sentences(12), "Short.", sentences(12)), max_chars=300, overlap_chars=60
    )
    assert [d.ordinal for d in drafts] == list(range(len(drafts)))
    assert [d.heading_path[1] for d in drafts].index("S1") > 0


def test_a_tiny_trailing_fragment_is_merged_into_the_previous_chunk() -> None:
    first, second = sentences(3, words=9), sentences(3, words=9, first=3)
    chunks = chunk(f"{first}\n\n{second}\n\nDone.", max_chars=300, overlap_chars=60)
    assert len(chunks) == 2
    assert chunks[0] == first
    assert chunks[1].endswith(f"{second}\n\nDone.")


def test_a_section_smaller_than_the_minimum_is_still_its_own_chunk() -> None:
    assert chunk("OK.") == ["OK."]


def test_chunking_is_deterministic() -> None:
    text = "# A\n\n" + "\n\n".join(sentences(4, first=4 * n) for n in range(10)) + "\n\n## B\n\nB."
    first = chunk_runbook(parse_runbook(text, fallback_title="f"), max_chars=300, overlap_chars=60)
    again = chunk_runbook(parse_runbook(text, fallback_title="f"), max_chars=300, overlap_chars=60)
    assert first == again


@pytest.mark.parametrize(("max_chars", "overlap_chars"), [(99, 0), (300, 300), (300, -1)])
def test_sizes_that_cannot_be_honoured_are_refused(max_chars: int, overlap_chars: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        chunk("text", max_chars=max_chars, overlap_chars=overlap_chars)


word = st.sampled_from(["disk", "full.", "Node", "restart,", "`kubectl`", "logs?", "x" * 400])
paragraph = st.lists(word, min_size=1, max_size=80).map(" ".join)
list_item = paragraph.map(lambda p: f"- {p}")
code_line = st.lists(word, max_size=12).map(" ".join)
code = st.lists(code_line, max_size=40).map(lambda lines: "```sh\n" + "\n".join(lines) + "\n```")
section_text = st.lists(st.one_of(paragraph, list_item, code), min_size=1, max_size=12).map(
    "\n\n".join
)


@settings(max_examples=100, deadline=None, database=None)
@given(
    texts=st.lists(section_text, min_size=1, max_size=3),
    max_chars=st.integers(min_value=100, max_value=800),
    overlap_share=st.floats(min_value=0, max_value=0.5),
)
def test_every_chunk_is_non_empty_within_max_and_free_of_edge_blank_lines(
    texts: list[str], max_chars: int, overlap_share: float
) -> None:
    runbook = runbook_of(*texts)
    drafts = chunk_runbook(
        runbook, max_chars=max_chars, overlap_chars=int(max_chars * overlap_share)
    )
    assert [d.ordinal for d in drafts] == list(range(len(drafts)))
    for draft in drafts:
        assert draft.content.strip()
        assert len(draft.content) <= max_chars
        assert draft.content.split("\n")[0].strip() and draft.content == draft.content.rstrip()
        assert len(FENCE_LINE.findall(draft.content)) % 2 == 0


@dataclass(frozen=True)
class ChunkedFile:
    path: Path
    runbook: ParsedRunbook
    drafts: list[ChunkDraft]
    drafts_per_section: list[list[ChunkDraft]]


@dataclass(frozen=True)
class ChunkedCollection:
    files: list[ChunkedFile]
    rejected: dict[Path, str]

    def drafts(self) -> Iterator[tuple[ChunkedFile, ChunkDraft]]:
        return ((f, d) for f in self.files for d in f.drafts)


def chunk_collection(root: Path) -> ChunkedCollection:
    files: list[ChunkedFile] = []
    rejected: dict[Path, str] = {}
    for path in sorted(root.rglob("*.md")):
        try:
            runbook = parse_runbook(path.read_text(encoding="utf-8"), fallback_title=path.stem)
        except RunbookFormatError as exc:
            rejected[path] = exc.reason
            continue
        drafts = chunk_runbook(runbook, max_chars=MAX_CHARS, overlap_chars=OVERLAP_CHARS)
        files.append(ChunkedFile(path, runbook, drafts, []))
    for chunked in files:
        for section in chunked.runbook.sections:
            alone = dataclasses.replace(chunked.runbook, sections=(section,))
            chunked.drafts_per_section.append(
                chunk_runbook(alone, max_chars=MAX_CHARS, overlap_chars=OVERLAP_CHARS)
            )
    return ChunkedCollection(files, rejected)


@pytest.fixture(scope="module")
def external() -> dict[str, ChunkedCollection]:
    missing = [name for name in COLLECTIONS if not (EXTERNAL / name).is_dir()]
    if missing:
        pytest.skip(f"external runbook collections {missing} are not checked out at {EXTERNAL}")
    return {name: chunk_collection(EXTERNAL / name) for name in COLLECTIONS}


def test_external_collections_chunk_into_a_sane_number_of_chunks(
    external: dict[str, ChunkedCollection],
) -> None:
    counts = {name: sum(len(f.drafts) for f in c.files) for name, c in external.items()}
    print(f"chunks per collection: {counts}, total {sum(counts.values())}")
    assert 4_000 <= sum(counts.values()) <= 5_000, counts
    assert all(count > 0 for count in counts.values()), counts


def test_external_files_rejected_are_few_and_each_has_a_reason(
    external: dict[str, ChunkedCollection],
) -> None:
    rejected = {path: reason for c in external.values() for path, reason in c.rejected.items()}
    total = sum(len(c.files) + len(c.rejected) for c in external.values())
    print(f"{len(rejected)} of {total} files rejected: {sorted(set(rejected.values()))}")
    assert len(rejected) <= total // 50, rejected
    assert all(reason.strip() for reason in rejected.values())


def test_external_chunks_are_non_empty_and_within_the_cap(
    external: dict[str, ChunkedCollection],
) -> None:
    for collection in external.values():
        for chunked, draft in collection.drafts():
            assert draft.content.strip(), chunked.path
            assert len(draft.content) <= MAX_CHARS, (chunked.path, draft.ordinal)
            assert draft.content == draft.content.strip("\n").rstrip(), chunked.path


def test_external_chunks_have_a_heading_path_when_their_file_has_headings(
    external: dict[str, ChunkedCollection],
) -> None:
    for collection in external.values():
        for chunked, draft in collection.drafts():
            if chunked.runbook.has_headings:
                assert draft.heading_path, (chunked.path, draft.ordinal)
                assert all(draft.heading_path), (chunked.path, draft.heading_path)


def test_external_heading_text_holds_no_shortcode_or_comment(
    external: dict[str, ChunkedCollection],
) -> None:
    for collection in external.values():
        for chunked in collection.files:
            headings = {h for s in chunked.runbook.sections for h in s.heading_path}
            assert not [h for h in headings if "{{" in h or "<!--" in h], chunked.path


def test_external_chunks_come_from_one_section_and_stand_tiny_only_if_no_neighbour_has_room(
    external: dict[str, ChunkedCollection],
) -> None:
    for collection in external.values():
        for chunked in collection.files:
            per_section = [d.content for drafts in chunked.drafts_per_section for d in drafts]
            assert per_section == [d.content for d in chunked.drafts], chunked.path
            pairs = zip(chunked.runbook.sections, chunked.drafts_per_section, strict=True)
            for section, drafts in pairs:
                for draft in drafts:
                    # Only the parts of a split code block gain fence lines the source lacks.
                    assert draft.content in section.text or FENCE_LINE.search(draft.content)
                for tiny in [i for i, d in enumerate(drafts) if len(d.content) < MIN_CHUNK_CHARS]:
                    # A tiny chunk stands alone only when each neighbour is too full to take it.
                    neighbours = drafts[max(tiny - 1, 0) : tiny] + drafts[tiny + 1 : tiny + 2]
                    sizes = [len(n.content) + len(drafts[tiny].content) for n in neighbours]
                    assert all(size > MAX_CHARS - 4 for size in sizes), (chunked.path, tiny)
