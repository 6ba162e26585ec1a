"""runbook-bot's core: ingestion, retrieval, gating, answering and verification. No Slack here."""

from rag.answering.answers import (
    Answerer,
    AskResult,
    Citation,
    Draft,
    DraftCitation,
    DroppedCitation,
    ask_result_json,
)
from rag.answering.cited_chunks import CitedChunk, QuoteSpan, load_chunks, locate_quote, quote_at
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
from rag.store.connection import RECONNECT_TIMEOUT_S, SHARED_PARTITION, Store, resolve_database_url
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
    "format_ask_result",
    "MAX_SECTIONS",
    "RunbookSection",
    "RunbookView",
    "gold_in_card",
    "load_runbook",
    "runbook_of",
    "section_heading",
]
