"""runbook-bot's core: ingestion, retrieval, gating, answering and verification. No Slack here.

Each public name is imported from its module on first use (PEP 562), so ``import rag`` costs
nothing and ``runbook --help`` does not load the pipeline (issue 38: ≤ 0.5 s).
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from rag.answering.answers import (
        Answerer,
        AskResult,
        Citation,
        Draft,
        DraftCitation,
        DroppedCitation,
        ask_result_json,
    )
    from rag.answering.cited_chunks import (
        CitedChunk,
        QuoteSpan,
        load_chunks,
        locate_quote,
        quote_at,
    )
    from rag.answering.runbook_sections import (
        gold_in_card,
        load_runbook,
        runbook_of,
        section_heading,
    )
    from rag.answering.runbook_view import MAX_SECTIONS, RunbookSection, RunbookView
    from rag.answering.state_changes import (
        CHANGES_STATE,
        STATE_CHANGES,
        AnswerStep,
        StateChange,
        answer_steps,
        code_changes_state,
        state_changes_in,
    )
    from rag.cli import build_parser, run_cli
    from rag.demo import run_demo
    from rag.embedding.batches import token_budget_batches
    from rag.embedding.embedder import Embedder, FastEmbedder
    from rag.embedding.model_files import assemble_default_model
    from rag.embedding.ordinary_words import NO_ORDINARY_WORDS
    from rag.errors import (
        AnswerProviderError,
        ConfigurationError,
        EmbeddingError,
        IngestFileError,
        IngestFileSkipped,
        ModelFileError,
        ModelMismatchError,
        PruneRefusedError,
        QuestionError,
        RunbookError,
        RunbookFormatError,
        SourceSyncError,
        StoreError,
        UnknownTenantError,
    )
    from rag.evaluation.evaluate import GoldenQuestion, load_golden
    from rag.ingest.chunking import chunk_runbook
    from rag.ingest.embed import embed_text
    from rag.ingest.files import discover_tenants, list_runbook_files, parse_source, read_text
    from rag.ingest.pipeline import IngestLimits, IngestReport, ingest_path
    from rag.ingest.staleness import age_in_days
    from rag.metrics import RagMetrics
    from rag.retrieval.alerts import Alert, parse_alert
    from rag.retrieval.evidence import Evidence, Excerpt
    from rag.retrieval.rank import RRF_K, ScopeHints
    from rag.retrieval.retrieve import BM25_PARAMS, HYBRID_QUERY, VECTOR_QUERY, Candidates, search
    from rag.runtime import Runtime, ingest_limits, open_runtime, open_store
    from rag.service import CANDIDATES_PER_RETRIEVER, RagService
    from rag.settings import DEFAULT_EMBEDDING_MODEL, Settings
    from rag.sources.access import ALLOW_FILE_SETTING, ALLOW_PRIVATE_SETTING, SourceAccess
    from rag.sources.confluence.source import ConfluenceReader, confluence_reader
    from rag.sources.connector import address_refusal_in, guarded_session
    from rag.sources.git.cli import GitCredential, remote_default_branch, remote_has_branch
    from rag.sources.git.paths import remote_has_folder
    from rag.sources.git.source import GitReader, GitSourceSettings
    from rag.sources.git.target import GitTarget, git_target
    from rag.sources.reader import (
        ItemProblem,
        SourceDocument,
        SourceListing,
        SourceMeta,
        SourceRead,
        SourceReader,
    )
    from rag.sources.rows import (
        SourceRow,
        add_source,
        claim_failure_report,
        get_source,
        list_sources,
        record_failed,
    )
    from rag.sources.sync import remove_source, sync_source
    from rag.sources.sync_report import SyncReport
    from rag.store.backend_priority import local_backend_pid
    from rag.store.connection import (
        RECONNECT_TIMEOUT_S,
        SHARED_PARTITION,
        Store,
        resolve_database_url,
    )
    from rag.store.partitions import RebalanceReport, rebalance
    from rag.store.tenant_removal import delete_tenant
    from rag.textout import format_ask_result
    from rag.workspaces import (
        ChannelScope,
        Workspace,
        add_workspace,
        channel_service,
        find_tenant,
        list_tenants,
        list_workspaces,
        map_channel,
        remove_workspace,
        require_tenant,
        unmapped_workspace,
    )

__all__ = [
    "Alert",
    "parse_alert",
    "BM25_PARAMS",
    "CANDIDATES_PER_RETRIEVER",
    "DEFAULT_EMBEDDING_MODEL",
    "HYBRID_QUERY",
    "RRF_K",
    "VECTOR_QUERY",
    "Candidates",
    "ScopeHints",
    "assemble_default_model",
    "chunk_runbook",
    "discover_tenants",
    "embed_text",
    "list_runbook_files",
    "parse_source",
    "read_text",
    "resolve_database_url",
    "local_backend_pid",
    "rebalance",
    "search",
    "token_budget_batches",
    "NO_ORDINARY_WORDS",
    "AnswerProviderError",
    "Answerer",
    "AskResult",
    "ChannelScope",
    "CitedChunk",
    "Citation",
    "ConfigurationError",
    "Draft",
    "DraftCitation",
    "DroppedCitation",
    "Embedder",
    "EmbeddingError",
    "Evidence",
    "GoldenQuestion",
    "Excerpt",
    "FastEmbedder",
    "IngestFileError",
    "IngestFileSkipped",
    "IngestLimits",
    "IngestReport",
    "ModelFileError",
    "ModelMismatchError",
    "PruneRefusedError",
    "QuestionError",
    "QuoteSpan",
    "RECONNECT_TIMEOUT_S",
    "RagMetrics",
    "RagService",
    "RebalanceReport",
    "RunbookError",
    "RunbookFormatError",
    "Runtime",
    "Settings",
    "SHARED_PARTITION",
    "Store",
    "StoreError",
    "Workspace",
    "add_workspace",
    "age_in_days",
    "build_parser",
    "run_cli",
    "ask_result_json",
    "channel_service",
    "delete_tenant",
    "find_tenant",
    "ingest_limits",
    "ingest_path",
    "load_golden",
    "list_workspaces",
    "load_chunks",
    "locate_quote",
    "map_channel",
    "open_runtime",
    "open_store",
    "quote_at",
    "remove_workspace",
    "run_demo",
    "SourceSyncError",
    "GitCredential",
    "GitReader",
    "GitSourceSettings",
    "remote_default_branch",
    "GitTarget",
    "git_target",
    "SourceAccess",
    "address_refusal_in",
    "guarded_session",
    "ALLOW_FILE_SETTING",
    "ALLOW_PRIVATE_SETTING",
    "remote_has_branch",
    "remote_has_folder",
    "ItemProblem",
    "SourceDocument",
    "SourceListing",
    "SourceMeta",
    "SourceRead",
    "SourceReader",
    "SourceRow",
    "add_source",
    "claim_failure_report",
    "get_source",
    "list_sources",
    "record_failed",
    "SyncReport",
    "remove_source",
    "sync_source",
    "ConfluenceReader",
    "confluence_reader",
    "CHANGES_STATE",
    "STATE_CHANGES",
    "AnswerStep",
    "StateChange",
    "answer_steps",
    "code_changes_state",
    "state_changes_in",
    "UnknownTenantError",
    "list_tenants",
    "require_tenant",
    "unmapped_workspace",
    "format_ask_result",
    "MAX_SECTIONS",
    "RunbookSection",
    "RunbookView",
    "gold_in_card",
    "load_runbook",
    "runbook_of",
    "section_heading",
]

# Where each public name is defined (names space-separated): the same as the imports above, which
# are what mypy and the import-cycle check (tests/test_layout.py) read; tests/test_public_api.py
# keeps the two equal.
_EXPORTS: dict[str, str] = {
    "rag.answering.answers": (
        "Answerer AskResult Citation Draft DraftCitation DroppedCitation ask_result_json"
    ),
    "rag.answering.cited_chunks": "CitedChunk QuoteSpan load_chunks locate_quote quote_at",
    "rag.answering.runbook_sections": "gold_in_card load_runbook runbook_of section_heading",
    "rag.answering.runbook_view": "MAX_SECTIONS RunbookSection RunbookView",
    "rag.answering.state_changes": (
        "CHANGES_STATE STATE_CHANGES AnswerStep StateChange answer_steps code_changes_state "
        "state_changes_in"
    ),
    "rag.cli": "build_parser run_cli",
    "rag.demo": "run_demo",
    "rag.embedding.batches": "token_budget_batches",
    "rag.embedding.embedder": "Embedder FastEmbedder",
    "rag.embedding.model_files": "assemble_default_model",
    "rag.embedding.ordinary_words": "NO_ORDINARY_WORDS",
    "rag.errors": (
        "AnswerProviderError ConfigurationError EmbeddingError IngestFileError IngestFileSkipped "
        "ModelFileError ModelMismatchError PruneRefusedError QuestionError RunbookError "
        "RunbookFormatError SourceSyncError StoreError UnknownTenantError"
    ),
    "rag.evaluation.evaluate": "GoldenQuestion load_golden",
    "rag.ingest.chunking": "chunk_runbook",
    "rag.ingest.embed": "embed_text",
    "rag.ingest.files": "discover_tenants list_runbook_files parse_source read_text",
    "rag.ingest.pipeline": "IngestLimits IngestReport ingest_path",
    "rag.ingest.staleness": "age_in_days",
    "rag.metrics": "RagMetrics",
    "rag.retrieval.alerts": "Alert parse_alert",
    "rag.retrieval.evidence": "Evidence Excerpt",
    "rag.retrieval.rank": "RRF_K ScopeHints",
    "rag.retrieval.retrieve": "BM25_PARAMS HYBRID_QUERY VECTOR_QUERY Candidates search",
    "rag.runtime": "Runtime ingest_limits open_runtime open_store",
    "rag.service": "CANDIDATES_PER_RETRIEVER RagService",
    "rag.settings": "DEFAULT_EMBEDDING_MODEL Settings",
    "rag.sources.access": "ALLOW_FILE_SETTING ALLOW_PRIVATE_SETTING SourceAccess",
    "rag.sources.connector": "address_refusal_in guarded_session",
    "rag.sources.confluence.source": "ConfluenceReader confluence_reader",
    "rag.sources.git.cli": "GitCredential remote_default_branch remote_has_branch",
    "rag.sources.git.paths": "remote_has_folder",
    "rag.sources.git.source": "GitReader GitSourceSettings",
    "rag.sources.git.target": "GitTarget git_target",
    "rag.sources.reader": (
        "ItemProblem SourceDocument SourceListing SourceMeta SourceRead SourceReader"
    ),
    "rag.sources.rows": (
        "SourceRow add_source claim_failure_report get_source list_sources record_failed"
    ),
    "rag.sources.sync": "remove_source sync_source",
    "rag.sources.sync_report": "SyncReport",
    "rag.store.backend_priority": "local_backend_pid",
    "rag.store.connection": "RECONNECT_TIMEOUT_S SHARED_PARTITION Store resolve_database_url",
    "rag.store.partitions": "RebalanceReport rebalance",
    "rag.store.tenant_removal": "delete_tenant",
    "rag.textout": "format_ask_result",
    "rag.workspaces": (
        "ChannelScope Workspace add_workspace channel_service find_tenant list_tenants "
        "list_workspaces map_channel remove_workspace require_tenant unmapped_workspace"
    ),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names.split()}

if not typing.TYPE_CHECKING:
    # Run time only: to mypy, a name missing from the imports above stays an error.

    def __getattr__(name: str) -> object:
        module = _MODULE_OF.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # the next access is a plain lookup
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
