"""The words a section heading opens with, and the ranker's ``heading_opens`` feature."""

from __future__ import annotations

import pytest

from rag.evidence import Evidence
from rag.heading_openings import opening_words
from rag.rank import ScopeHints
from rag.rank_features import FEATURES, candidate_features


@pytest.mark.parametrize(
    ("heading", "opening"),
    [
        ("Step 2: delete the keys", "delete"),
        ("Step 1 - Stop chef-client", "stop"),
        ("Step 1. Create a policy", "create"),
        ("OPTIONAL Step 3: Upgrade Node Pool", "upgrade"),
        ("Option 1: Resolve the underlying issue (Recommended)", "resolve"),
        ("Part 1: Restore the project metadata", "restore"),
        ("Step one: fail over", "fail"),
        ("1. Delete Data", "delete"),
        ("12. Script to Reset gpg-agent", "script"),
        ("1.2 Configure the pool", "configure"),
        ("(2) Drain the node", "drain"),
        ("#4 Kill the stuck query", "kill"),
        ("a) Restart the pod", "restart"),
        ("Ban a single IP", "ban"),
        ("**Ban** a single IP", "ban"),
        ("`kubectl drain` the node", "kubectl"),
        ("[Delete](https://example.com/x) data", "delete"),
        ("How do I find the right logs for my service?", "find"),
        ("The cluster information", "cluster"),
        ("404 errors occur when gateways share a certificate", "404"),
    ],
)
def test_a_heading_opens_with_its_first_word_after_numbering_and_stopwords(
    heading: str, opening: str
) -> None:
    assert opening_words(heading)[0] == opening


@pytest.mark.parametrize("heading", ["Approach 1", "Step 0.1", "Phase one", "Option B", "1."])
def test_a_heading_that_is_only_a_numbering_label_opens_with_nothing(heading: str) -> None:
    assert opening_words(heading) == ()


def _section(chunk_id: int, *heading_path: str) -> Evidence:
    return Evidence(
        chunk_id=chunk_id,
        document_id="docs/redis/redis-cache",
        version=1,
        title=heading_path[0],
        heading_path=heading_path,
        content="text",
        url=None,
        owner=None,
        updated=None,
        service=None,
        cosine=0.5,
        vector_rank=chunk_id,
        keyword_rank=chunk_id,
        score=0.0,
    )


def test_only_the_sibling_whose_heading_opens_with_the_asked_word_gets_heading_opens() -> None:
    found = [
        _section(1, "Redis cache", "Deleting keys", "Step 1: obtain the keys to be deleted"),
        _section(2, "Redis cache", "Deleting keys", "Step 2: delete the keys"),
    ]
    rows = candidate_features(
        found,
        ScopeHints(),
        "how to delete some keys from the redis cache",
        term_df={"delet": 40, "key": 60, "redi": 300, "cach": 80},
        tenant_chunks=3000,
    )
    column = FEATURES.index("heading_opens")
    assert [row[column] for row in rows] == [0.0, 1.0]


def test_a_runbooks_preamble_never_opens_with_an_asked_word() -> None:
    preamble = _section(1, "Delete keys")
    rows = candidate_features(
        [preamble], ScopeHints(), "delete keys", term_df={"delet": 4}, tenant_chunks=100
    )
    assert rows[0][FEATURES.index("heading_opens")] == 0.0
