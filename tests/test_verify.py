from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rag.answering.answers import Draft, DraftCitation, DroppedCitation
from rag.answering.claims import cut_claims
from rag.answering.verify import verify_draft
from rag.retrieval.evidence import Evidence, Excerpt

DIAGNOSIS = (
    "Open the Grafana dashboard **Payments / Gateway overview**.\n"
    'The panel "5xx by origin" splits errors by the `origin` label.\n\n'
    '- `origin="psp"`: the gateway answered 502 or 504 because the PSP failed or timed out.\n'
    '- `origin="internal"`: the gateway itself returned 500/503 (exceptions, database, pool\n'
    "  exhaustion).\n"
)
MITIGATION = (
    'If the errors are `origin="psp"` and HarborPay is degraded, move card traffic to Kestrel.\n'
    "The change takes effect within 15 seconds.\n"
)
ESCALATION = "Page `acme-payments` in PagerDuty. For a SEV1, inform the Head of Payments.\n"


def excerpt(n: int, content: str, section: str = "Diagnosis") -> Excerpt:
    evidence = Evidence(
        chunk_id=100 + n,
        document_id="payments/gateway-5xx",
        version=1,
        title="Payments gateway returning 5xx",
        heading_path=("Payments gateway returning 5xx", section),
        content=content,
        url=None,
        owner="team-payments",
        updated="2025-03-18",
        service="payments-gateway",
        cosine=0.7,
        vector_rank=n,
        keyword_rank=n,
        score=1 / n,
    )
    return Excerpt(n=n, evidence=evidence, text=content, truncated=False)


EXCERPTS = (
    excerpt(1, DIAGNOSIS),
    excerpt(2, MITIGATION, "Mitigation"),
    excerpt(3, ESCALATION, "Escalation"),
)


def draft(text: str, *citations: tuple[int, str], status: str = "answered") -> Draft:
    return Draft(
        status=status,  # type: ignore[arg-type]
        text=text,
        citations=tuple(DraftCitation(n, quote) for n, quote in citations),
        provider="test",
    )


def test_valid_citation_is_kept_with_its_evidence() -> None:
    result = verify_draft(
        draft(
            "Move card traffic to Kestrel. [2]", (2, "The change takes effect within 15 seconds.")
        ),
        EXCERPTS,
    )
    assert result.ok
    assert result.problems == () and result.dropped == ()
    assert [(c.n, c.evidence.chunk_id) for c in result.citations] == [(2, 102)]
    assert result.text == "Move card traffic to Kestrel. [2]"


def test_citation_naming_a_missing_excerpt_is_dropped_and_counted() -> None:
    result = verify_draft(
        draft(
            "Check the dashboard [1]. Restart everything [9].",
            (1, "Open the Grafana dashboard **Payments / Gateway overview**."),
            (9, "Restart every pod in the namespace."),
        ),
        EXCERPTS,
    )
    assert [c.n for c in result.citations] == [1]
    assert result.dropped == (DroppedCitation(n=9, reason="no_such_excerpt"),)
    assert result.problems == ("citation [9] names no excerpt (there are 3)",)
    # The claim of the dropped citation goes with it, not just its marker.
    assert result.text == "Check the dashboard [1]."


def test_quote_not_in_its_chunk_is_rejected() -> None:
    # The words are real, but from excerpt 2, not the excerpt the marker names.
    result = verify_draft(
        draft("It takes 15 seconds. [1]", (1, "The change takes effect within 15 seconds.")),
        EXCERPTS,
    )
    assert not result.ok
    assert result.dropped == (DroppedCitation(n=1, reason="quote_not_in_excerpt"),)
    assert result.problems == ("the quote for [1] is not a contiguous excerpt of excerpt 1",)
    assert result.text == ""


def test_paraphrased_or_reformatted_quote_is_rejected() -> None:
    for quote in (
        "Open the Grafana dashboard Payments / Gateway overview.",  # emphasis dropped
        "open the grafana dashboard **payments / gateway overview**.",  # case changed
        "Open the Grafana dashboard … overview**.",  # elided
    ):
        result = verify_draft(draft("See the dashboard. [1]", (1, quote)), EXCERPTS)
        assert result.problems == ("the quote for [1] is not a contiguous excerpt of excerpt 1",)


def test_quote_shorter_than_four_words_is_rejected() -> None:
    result = verify_draft(draft("Use Kestrel. [2]", (2, "move card traffic")), EXCERPTS)
    assert not result.ok
    assert result.dropped == (DroppedCitation(n=2, reason="quote_too_short"),)
    assert result.problems == ("the quote for [2] has 3 words; quotes need at least 4",)


def test_quote_matches_across_reflowed_whitespace_and_curly_quotes() -> None:
    # The chunk breaks this item across two lines and uses straight quotes.
    quote = (
        "`origin=\u201cinternal\u201d`:   the gateway itself returned 500/503"
        " (exceptions, database, pool exhaustion)."
    )
    result = verify_draft(draft("Internal errors are ours. [1]", (1, quote)), EXCERPTS)
    assert result.ok and result.problems == ()
    assert result.citations[0].quote == quote


def test_marker_without_declared_citation_is_reported_and_removed() -> None:
    result = verify_draft(
        draft("Fail over to Kestrel [2] and page the on-call [3].", (2, MITIGATION.split("\n")[0])),
        EXCERPTS,
    )
    assert [c.n for c in result.citations] == [2]
    assert result.dropped == (DroppedCitation(n=3, reason="undeclared_marker"),)
    assert result.problems == ("marker [3] in the text has no declared citation",)
    assert result.text == "Fail over to Kestrel [2]"


def test_declared_citation_never_marked_is_reported_and_dropped() -> None:
    result = verify_draft(
        draft(
            "Fail over to Kestrel. [2]",
            (2, "The change takes effect within 15 seconds."),
            (3, "For a SEV1, inform the Head of Payments."),
        ),
        EXCERPTS,
    )
    assert [c.n for c in result.citations] == [2]
    assert result.problems == ("citation [3] is declared but never marked in the text",)


def test_grouped_and_adjacent_markers_keep_only_surviving_numbers() -> None:
    result = verify_draft(
        draft(
            "Page payments [1, 3]. Fail over [2][9].",
            (1, "Page `acme-payments` in PagerDuty."),
            (3, "For a SEV1, inform the Head of Payments."),
            (2, "move card traffic to Kestrel."),
            (9, "Nothing here is real at all."),
        ),
        EXCERPTS,
    )
    assert sorted(c.n for c in result.citations) == [2, 3]
    assert result.text == "Page payments [3]. Fail over [2]."
    assert [d.reason for d in result.dropped] == ["quote_not_in_excerpt", "no_such_excerpt"]


def test_duplicate_citations_collapse() -> None:
    quote = "The change takes effect within 15 seconds."
    result = verify_draft(
        draft(
            "Wait 15 seconds. [2] It applies fast. [2]", (2, quote), (2, quote), (2, f" {quote}\n")
        ),
        EXCERPTS,
    )
    assert len(result.citations) == 1 and result.dropped == () and result.problems == ()


def test_bracketed_numbers_inside_code_are_not_markers() -> None:
    text = (
        "Read the image with `jsonpath='{.containers[0].image}'`. [1]\n```\nx = pods[2]\n```\n[1]"
    )
    result = verify_draft(
        draft(text, (1, "Open the Grafana dashboard **Payments / Gateway overview**.")), EXCERPTS
    )
    assert result.problems == ()
    assert result.text == text


def test_a_sentence_whose_citation_failed_is_removed_while_the_verified_one_stays() -> None:
    result = verify_draft(
        draft(
            "Move card traffic to Kestrel. [2] Then run `DROP TABLE payments` on the primary. [3]",
            (2, "move card traffic to Kestrel."),
            (3, "run DROP TABLE payments on the primary"),
        ),
        EXCERPTS,
    )
    assert result.ok and [c.n for c in result.citations] == [2]
    assert result.text == "Move card traffic to Kestrel. [2]"


def test_a_list_item_whose_citation_failed_is_removed_with_its_line() -> None:
    result = verify_draft(
        draft(
            "- Fail over to Kestrel. [2]\n"
            "- Delete the payments namespace. [9]\n"
            "- Page the team. [3]",
            (2, "move card traffic to Kestrel."),
            (9, "Delete the payments namespace right away."),
            (3, "Page `acme-payments` in PagerDuty."),
        ),
        EXCERPTS,
    )
    assert result.text == "- Fail over to Kestrel. [2]\n- Page the team. [3]"


def test_an_unmarked_sentence_stays_only_as_part_of_the_next_verified_quote() -> None:
    quoted = "Page `acme-payments` in PagerDuty. For a SEV1, inform the Head of Payments."
    kept = verify_draft(draft(f"{quoted} [3]", (3, quoted)), EXCERPTS)
    assert kept.text == f"{quoted} [3]" and kept.problems == ()

    invented = verify_draft(
        draft("Restart every pod first. Page `acme-payments` in PagerDuty. [3]", (3, quoted)),
        EXCERPTS,
    )
    assert invented.text == "Page `acme-payments` in PagerDuty. [3]"
    assert invented.problems == ("this sentence carries no citation: Restart every pod first.",)
    assert invented.dropped == ()


def test_a_code_block_followed_by_its_marker_is_one_claim() -> None:
    code = "```bash\npatronictl -c /etc/patroni.yml list\n```"
    text = f"Check the cluster first: [1]\n{code}\n[9]"
    result = verify_draft(
        draft(
            text,
            (1, "Open the Grafana dashboard **Payments / Gateway overview**."),
            (9, "patronictl -c /etc/patroni.yml list"),
        ),
        EXCERPTS,
    )
    assert result.text == "Check the cluster first: [1]"


def test_a_sentence_and_the_command_it_introduces_are_one_claim_under_one_marker() -> None:
    claims = cut_claims("Check the cluster first:\n```bash\npatronictl list\n```\n[1]\nNext. [2]")

    assert [claim.numbers for claim in claims] == [(1,), (2,)]
    assert claims[0].text.startswith("Check the cluster first:\n```bash")


def test_not_in_sources_draft_cites_nothing() -> None:
    result = verify_draft(
        draft(
            "The runbooks do not cover disk pressure. [1]",
            (1, "Open the Grafana dashboard **Payments / Gateway overview**."),
            status="not_in_sources",
        ),
        EXCERPTS,
    )
    assert not result.ok and result.citations == ()
    assert result.dropped == (DroppedCitation(n=1, reason="not_in_sources"),)
    assert result.problems == (
        "citation [1] is declared, but a not_in_sources answer cites nothing",
    )
    assert result.text == "The runbooks do not cover disk pressure."


_WORD = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")),
    min_size=1,
    max_size=12,
)
_GAP = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", " \n  "])


@settings(database=None, max_examples=200)
@given(data=st.data(), words=st.lists(_WORD, min_size=4, max_size=60))
def test_any_contiguous_slice_of_four_or_more_words_verifies(
    data: st.DataObject, words: list[str]
) -> None:
    gaps = data.draw(st.lists(_GAP, min_size=len(words), max_size=len(words)))
    content = "".join(word + gap for word, gap in zip(words, gaps, strict=True))
    start = data.draw(st.integers(min_value=0, max_value=len(words) - 4))
    end = data.draw(st.integers(min_value=start + 4, max_value=len(words)))
    quote = " ".join(words[start:end])
    result = verify_draft(draft("The runbook says so. [1]", (1, quote)), (excerpt(1, content),))
    assert result.ok, result.problems
    assert result.text == "The runbook says so. [1]"
