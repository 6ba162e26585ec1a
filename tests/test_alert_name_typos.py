"""An alert name pasted with a typo names the runbook the name names, or none: never another.
Checked on every alert name of the public eval rows that resolves in its tenant (the tenants'
runbook file names read from evals/collections), each with a letter dropped and two swapped."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from rag.retrieval.alerts import looks_like_alert_name
from rag.retrieval.catalog import TenantCatalog
from rag.retrieval.runbook_names import RunbookNames, squash

EVALS = Path(__file__).resolve().parents[1] / "evals"
TENANTS = {
    "prom": "collections/prometheus-operator/content/runbooks",
    "openshift": "collections/openshift/alerts",
    "gitlab": "collections/gitlab",
    "etcd": "collections/etcd/docs",
    "istio": "collections/istio/docs",
}


@cache
def tenant_catalog(tenant: str) -> TenantCatalog:
    """The catalog of a tenant's runbooks by file name, as ``CatalogCache`` builds it."""
    root = EVALS / TENANTS[tenant]
    documents: dict[str, str] = {}
    spelled: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*.md")):
        document = path.relative_to(root).with_suffix("").as_posix()
        name = document.rsplit("/", 1)[-1]
        documents[document.lower()] = document
        documents.setdefault(name.lower(), document)
        spelled.append((name, document))
    runbook_names = RunbookNames.build(spelled)
    return TenantCatalog(frozenset(), documents, frozenset({"model"}), len(spelled),
                         runbook_names=runbook_names)  # fmt: skip


def typos(name: str) -> tuple[str, str]:
    """``name`` with a letter in its middle dropped, and with that letter and the next swapped."""
    i = len(name) // 2
    return name[:i] + name[i + 1 :], name[:i] + name[i + 1] + name[i] + name[i + 2 :]


def named_alerts() -> list[tuple[str, str, str, str]]:
    """(tenant, question, alert name, its runbook) for each alert name of the public rows that
    is its runbook's own file name in some spelling and long enough to carry a typo."""
    found: dict[tuple[str, str], tuple[str, str, str, str]] = {}
    for path in sorted((EVALS / "public").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            tenant, question = row["tenant"], row["question"]
            if tenant not in TENANTS:
                continue
            catalog = tenant_catalog(tenant)
            document = catalog.alert_named_in(question)
            for token in question.replace(",", " ").split():
                token = token.strip("`*:.()[]\"'")
                if (
                    document is not None
                    and looks_like_alert_name(token)
                    and len(squash(token)) >= 9
                    and catalog.runbook_names.squashed.get(squash(token)) == document
                ):
                    found.setdefault((tenant, token), (tenant, question, token, document))
    return list(found.values())


NAMED = named_alerts()


def test_the_public_rows_name_enough_alerts_to_check() -> None:
    assert len(NAMED) >= 40


@pytest.mark.parametrize(("tenant", "question", "name", "document"), NAMED)
def test_a_typo_in_a_pasted_alert_name_keeps_its_runbook(
    tenant: str, question: str, name: str, document: str
) -> None:
    catalog = tenant_catalog(tenant)
    for typo in typos(name):
        assert catalog.alert_named_in(question.replace(name, typo)) == document, typo
