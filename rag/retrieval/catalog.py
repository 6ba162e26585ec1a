"""A tenant's current runbooks at a glance: their names and the models that embedded them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from cachetools import TTLCache

from rag.retrieval.alerts import looks_like_alert_name
from rag.retrieval.rank import ScopeHints
from rag.retrieval.runbook_names import RunbookNames, name_words
from rag.retrieval.terms import name_parts, question_terms
from rag.store.connection import Store

# Shorter names ("db", "api") match too much ordinary prose to be a useful signal.
_MIN_NAME_LENGTH = 4
# An alert name in a question: letters, digits and the separators of snake and kebab case.
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*[A-Za-z0-9]")
# A lower-case word shorter than this is an ordinary word more often than an alert.
_MIN_ALERT_LENGTH = 8

_TENANT_DOCUMENTS = """
SELECT document_id, title, service, embedding_model
FROM documents WHERE tenant_id = %(tenant)s AND NOT superseded
"""

_TENANT_CHUNKS = """
SELECT count(*) FROM chunks WHERE tenant_id = %(tenant)s AND NOT superseded
"""

_OWN_PARTITION = "SELECT EXISTS (SELECT FROM tenant_partitions WHERE tenant_id = %(tenant)s)"


@dataclass(frozen=True)
class TenantCatalog:
    services: frozenset[str]
    documents: dict[str, str]
    embedding_models: frozenset[str]
    chunk_count: int
    # Each multi-word name (``etcdNoLeader`` -> etcd, no, leader) with its document, for
    # questions that name an alert in words.
    worded_names: tuple[tuple[frozenset[str], str], ...] = ()
    # The lowercased names of ``documents`` that are two words or more.
    distinctive: frozenset[str] = frozenset()
    # Whether the tenant has a partition of its own, the only kind that can carry an HNSW graph.
    own_partition: bool = False
    # The runbooks' file names and titles in any spelling, for alert names.
    runbook_names: RunbookNames = field(default_factory=lambda: RunbookNames({}, ()))

    @property
    def empty(self) -> bool:
        return not self.embedding_models

    def hints_in(
        self,
        question: str,
        alert_name: str | None = None,
        alert_document: str | None = None,
    ) -> ScopeHints:
        """Services and documents the question names verbatim (``KubePodCrashLooping``).

        Only distinctive names count (two words or more: ``redis-evictions``, ``etcdNoLeader``);
        a runbook called ``postgres`` is not named by every question that says "postgres". An
        alert's own name counts whatever its shape (``Watchdog``). ``alert_document`` is an
        alert post's resolved runbook; a question's own alert name is looked up here.
        """
        lowered = question.lower()
        services = frozenset(s for s in self.services if _mentions(lowered, s.lower()))
        documents = {
            document_id
            for name, document_id in self.documents.items()
            if name in self.distinctive and _mentions(lowered, name)
        }
        if alert_name is not None and alert_name.lower() in self.documents:
            documents.add(self.documents[alert_name.lower()])
        words = set(question_terms(question))
        loose = frozenset(
            document_id
            for parts, document_id in self.worded_names
            if parts <= words and document_id not in documents
        )
        return ScopeHints(
            services=services,
            documents=frozenset(documents),
            loose_documents=loose,
            alert_document=alert_document or self.alert_named_in(question),
        )

    def with_runbook_names(self, question: str) -> str:
        """``question`` with each alert name written as its runbook writes it, when it names
        exactly one (``alert_named_in``): "kubejobfailed" and "MCCDrainError" read
        ``KubeJobFailed`` and ``MachineConfigControllerDrainError``, the words the runbook and
        its chunks hold."""
        document = self.alert_named_in(question)
        if document is None:
            return question
        written = document.rsplit("/", 1)[-1]

        def respell(match: re.Match[str]) -> str:
            token = match.group(0)
            return written if self._alert_document(token) == document else token

        return _WORD.sub(respell, question)

    def alert_named_in(self, question: str) -> str | None:
        """The runbook of the alert ``question`` names, when the names it carries that read as
        alert names resolve to exactly one runbook: ``KubePodCrashLooping``, ``MCCDrainError``
        (an acronym), or an alert typed in lower case as one word (``kubejobfailed``) where the
        runbook's own name is several words. A workload's or host's name is not an alert name,
        so the alert's runbook is the one that answers (issue 38: an OOM-kill alert beside a
        worker's name answered from the worker's scaling runbook). An alert-shaped name with a
        typo (``KubePodCrashLoping``) names the one runbook it is closest to."""
        found = {
            document
            for token in _WORD.findall(question)
            if (document := self._alert_document(token)) is not None
        }
        return found.pop() if len(found) == 1 else None

    def _alert_document(self, token: str) -> str | None:
        """The runbook ``token`` names as an alert: spelled any way, or a CamelCase or snake
        name within a typo or two of one runbook's name (never an ordinary lower-case word)."""
        shaped = looks_like_alert_name(token)
        if not shaped and not (token.isalpha() and token.islower()):
            return None
        if len(token) < _MIN_ALERT_LENGTH:
            return None
        document = self._named(token)
        if document is None:
            return self.runbook_names.near(token) if shaped else None
        if shaped or len(name_words(document.rsplit("/", 1)[-1])) >= 2:
            return document
        return None

    def runbook_named(self, name: str | None, runbook_url: str | None = None) -> str | None:
        """The runbook an alert points at: its ``runbook_url``, else its name in any spelling
        (``rag.retrieval.runbook_names``: CamelCase, snake_case, kebab-case, an ``Alert`` suffix,
        acronyms)."""
        if runbook_url:
            path = urlsplit(runbook_url).path.rstrip("/")
            stem = re.sub(r"\.(?:md|markdown|html?)$", "", path, flags=re.I)
            parts = stem.split("/")
            for tail in ("/".join(parts[-2:]), parts[-1]):
                found = self._named(tail)
                if found is not None:
                    return found
        return self._named(name) if name else None

    def _named(self, name: str) -> str | None:
        exact = self.documents.get(name.lower())
        return exact if exact is not None else self.runbook_names.runbook_for(name)

    def names(self) -> frozenset[str]:
        """Every runbook name and title of the tenant, lowercased."""
        return frozenset(self.documents)


def _mentions(text: str, name: str) -> bool:
    if len(name) < _MIN_NAME_LENGTH:
        return False
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


class CatalogCache:
    """Per-tenant catalogs, cached briefly: ingestion is rare, questions are not.

    Touch only from the event loop (cachetools caches are not thread-safe).
    """

    def __init__(self, store: Store, *, ttl_seconds: float = 30.0) -> None:
        self._store = store
        self._cache: TTLCache[str, TenantCatalog] = TTLCache(maxsize=4096, ttl=ttl_seconds)

    async def catalog_for(self, tenant: str) -> TenantCatalog:
        cached = self._cache.get(tenant)
        if cached is not None:
            return cached
        async with self._store.tenant_reader(tenant) as conn:
            cur = await conn.execute(_TENANT_DOCUMENTS, {"tenant": tenant})
            rows = await cur.fetchall()
            cur = await conn.execute(_TENANT_CHUNKS, {"tenant": tenant})
            counted = await cur.fetchone()
            cur = await conn.execute(_OWN_PARTITION, {"tenant": tenant})
            partitioned = await cur.fetchone()
        services: set[str] = set()
        documents: dict[str, str] = {}
        models: set[str] = set()
        worded: dict[frozenset[str], str] = {}
        distinctive: set[str] = set()
        spelled: list[tuple[str, str]] = []
        for document_id, title, service, model in rows:
            if service:
                services.add(service)
            models.add(model)
            documents[document_id.lower()] = document_id
            distinctive.add(document_id.lower())
            for name in (document_id.rsplit("/", 1)[-1], title):
                documents.setdefault(name.lower(), document_id)
                spelled.append((name, document_id))
                parts = name_parts(name)
                if len(parts) >= 2:
                    worded.setdefault(parts, document_id)
                    distinctive.add(name.lower())
        catalog = TenantCatalog(
            frozenset(services),
            documents,
            frozenset(models),
            counted[0] if counted else 0,
            tuple(worded.items()),
            frozenset(distinctive),
            own_partition=bool(partitioned and partitioned[0]),
            runbook_names=RunbookNames.build(spelled),
        )
        self._cache[tenant] = catalog
        return catalog

    def clear(self) -> None:
        self._cache.clear()
