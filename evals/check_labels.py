"""Check every golden label of the public eval sets against the collections, without embedding.

Each tenant folder is parsed with the project's own reader (``rag.ingest.files`` + ``rag.formats.markdown``),
so document ids and heading texts are exactly those ingestion stores. The check fails when:

- a row breaks the golden-set contract (keys, tenant, ``expect`` shape);
- an expected document does not exist in the row's tenant;
- an expected section is not a heading of that document that some chunk carries in its
  ``heading_path`` (compared case-insensitively, as ``runbook eval`` does);
- two rows share an id, or the same tenant gets the same question twice;
- an abstain row has no entry in ``sources/abstain-terms.jsonl`` (public sets) or
  ``holdout/abstain-terms.jsonl`` (held-out set), or one of the terms listed there (the subject a
  runbook would need to cover to answer it) occurs in any Markdown file of the row's tenant
  (case-insensitive substring of the raw text).

Run from the repository root: ``python evals/check_labels.py`` (exit status 1 on any problem)
checks ``public/*.jsonl`` and the held-out set's two files; pass files to check only those.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rag.errors import IngestFileError
from rag.ingest.files import list_runbook_files, parse_source, read_text

EVALS = Path(__file__).resolve().parent
# Tenant id -> the folder ingested with ``runbook ingest FOLDER --tenant ID``.
TENANT_ROOTS = {
    "prom": EVALS / "collections/prometheus-operator/content/runbooks",
    "openshift": EVALS / "collections/openshift/alerts",
    "gitlab": EVALS / "collections/gitlab",
    "ibmcloud": EVALS / "collections/mt-rag-cloud/corpus",
    "etcd": EVALS / "collections/etcd/docs",
    "istio": EVALS / "collections/istio/docs",
    # Held-out tenants (evals/holdout/): report-only, never tuned on.
    "rook": EVALS / "collections/rook/docs",
    "cortex": EVALS / "collections/cortex/docs",
}
DEFAULT_FILES = [
    *sorted((EVALS / "public").glob("*.jsonl")),
    EVALS / "holdout/questions.jsonl",
    EVALS / "holdout/alerts.jsonl",
]
# Abstain terms of the public sets and of the held-out set (ids never overlap).
ABSTAIN_TERMS = (EVALS / "sources/abstain-terms.jsonl", EVALS / "holdout/abstain-terms.jsonl")
_MAX_FILE_BYTES = 1_000_000
_ROW_KEYS = {"id", "tenant", "question", "expect"}
_OPTIONAL_KEYS = {"kind", "type", "source", "phrasing"}


@dataclass(frozen=True)
class Tenant:
    """What ingestion would store for one tenant: document id -> its headings (lower-cased)."""

    headings: dict[str, frozenset[str]]
    failures: dict[str, str]
    # Lower-cased raw text of every Markdown file, for the abstain-terms check.
    texts: tuple[str, ...]


def load_tenant(root: Path) -> Tenant:
    headings: dict[str, frozenset[str]] = {}
    failures: dict[str, str] = {}
    texts: list[str] = []
    for path in list_runbook_files(root):
        texts.append(path.read_text(encoding="utf-8", errors="replace").lower())
        try:
            raw, text = read_text(path, max_bytes=_MAX_FILE_BYTES)
            source = parse_source(root, path, raw, text)
        except IngestFileError as exc:
            failures[path.relative_to(root).as_posix()] = exc.reason
            continue
        if source.document_id in headings:
            failures[source.relative_path] = f"duplicate document id {source.document_id!r}"
            continue
        headings[source.document_id] = frozenset(
            entry.casefold()
            for section in source.runbook.sections
            for entry in section.heading_path
        )
    return Tenant(headings=headings, failures=failures, texts=tuple(texts))


def check_target(target: object, tenant: Tenant) -> list[str]:
    if not isinstance(target, dict) or set(target) - {"document", "section"}:
        return [f"target must be {{document[, section]}}, got {target!r}"]
    document = target.get("document")
    if not isinstance(document, str):
        return [f"target without a document: {target!r}"]
    if document not in tenant.headings:
        return [f"no document {document!r}"]
    section = target.get("section")
    if section is None:
        return []
    if not isinstance(section, str) or section.casefold() not in tenant.headings[document]:
        return [f"{document!r} has no heading {section!r}"]
    return []


def check_row(row: dict[str, object], tenants: dict[str, Tenant]) -> list[str]:
    keys = set(row)
    if not _ROW_KEYS <= keys or keys - _ROW_KEYS - _OPTIONAL_KEYS:
        return [f"keys must be {sorted(_ROW_KEYS)} (+ optional {sorted(_OPTIONAL_KEYS)})"]
    tenant = tenants.get(str(row["tenant"]))
    if tenant is None:
        return [f"unknown tenant {row['tenant']!r}"]
    question = row["question"]
    if not isinstance(question, str) or not question.strip():
        return ["empty question"]
    expect = row["expect"]
    if expect == "abstain":
        return []
    if isinstance(expect, dict) and set(expect) == {"any_of"}:
        targets = expect["any_of"]
        if not isinstance(targets, list) or len(targets) < 2:
            return ["any_of needs a list of at least two targets"]
        return [problem for target in targets for problem in check_target(target, tenant)]
    return check_target(expect, tenant)


def check_abstain_terms(
    row: dict[str, object], tenant: Tenant, terms: dict[str, list[str]]
) -> list[str]:
    absent = terms.get(str(row["id"]))
    if not absent:
        return ["abstain row without an entry in an abstain-terms.jsonl"]
    found = [t for t in absent if any(t.lower() in text for text in tenant.texts)]
    return [f"abstain term {t!r} occurs in the tenant's runbooks" for t in found]


def load_abstain_terms() -> dict[str, list[str]]:
    terms: dict[str, list[str]] = {}
    for path in ABSTAIN_TERMS:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["id"] in terms:
                raise ValueError(f"{path.name}: abstain terms for {row['id']!r} given twice")
            terms[row["id"]] = row["absent"]
    return terms


def check_files(files: list[Path], tenants: dict[str, Tenant]) -> list[str]:
    problems: list[str] = []
    terms = load_abstain_terms()
    ids: Counter[str] = Counter()
    questions: Counter[tuple[str, str]] = Counter()
    for file in files:
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            where = f"{file.name}:{number}"
            if not line.strip():
                problems.append(f"{where}: blank line")
                continue
            row = json.loads(line)
            ids[str(row.get("id"))] += 1
            key = (str(row.get("tenant")), " ".join(str(row.get("question")).lower().split()))
            questions[key] += 1
            found = check_row(row, tenants)
            if not found and row["expect"] == "abstain":
                found = check_abstain_terms(row, tenants[row["tenant"]], terms)
            problems.extend(f"{where} ({row.get('id')}): {p}" for p in found)
    problems.extend(f"duplicate id {i!r} ({n} rows)" for i, n in ids.items() if n > 1)
    problems.extend(
        f"duplicate question in {t!r}: {q!r}" for (t, q), n in questions.items() if n > 1
    )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("files", nargs="*", type=Path, help="golden files (default: public/*)")
    args = parser.parse_args(argv)
    files = [f.resolve() for f in args.files] or DEFAULT_FILES
    tenants = {name: load_tenant(root) for name, root in TENANT_ROOTS.items()}
    for name, tenant in tenants.items():
        skipped = ", ".join(f"{p} ({why})" for p, why in sorted(tenant.failures.items()))
        print(
            f"{name}: {len(tenant.headings)} documents"
            + (f"; not ingestible: {skipped}" if skipped else "")
        )
    problems = check_files(files, tenants)
    for problem in problems:
        print(problem, file=sys.stderr)
    total = sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)
    print(f"{total} rows in {len(files)} files: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
