"""runbook-bot's core: ingestion, retrieval, gating, answering and verification. No Slack here."""

from rag.answers import (
    Answerer,
    AskResult,
    Citation,
    Draft,
    DraftCitation,
    DroppedCitation,
    ask_result_json,
)
from rag.chunking import chunk_runbook
from rag.cited_chunks import CitedChunk, QuoteSpan, load_chunks, locate_quote, quote_at
from rag.cli import build_parser, run_cli
from rag.demo import run_demo
from rag.embedding import Embedder, FastEmbedder
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
    StoreError,
)
from rag.evaluate import GoldenQuestion, load_golden
from rag.evidence import Evidence, Excerpt
from rag.ingest import IngestLimits, IngestReport, ingest_path
from rag.ingest_embed import embed_text
from rag.metrics import RagMetrics
from rag.model_files import assemble_default_model
from rag.partitions import RebalanceReport, rebalance
from rag.rank import RRF_K, ScopeHints
from rag.retrieve import BM25_PARAMS, HYBRID_QUERY, VECTOR_QUERY, Candidates, search
from rag.runtime import Runtime, ingest_limits, open_runtime, open_store
from rag.service import CANDIDATES_PER_RETRIEVER, RagService
from rag.settings import DEFAULT_EMBEDDING_MODEL, Settings
from rag.sources import discover_tenants, list_runbook_files, parse_source, read_text
from rag.staleness import age_in_days
from rag.store import RECONNECT_TIMEOUT_S, SHARED_PARTITION, Store, resolve_database_url
from rag.workspaces import (
    ChannelScope,
    Workspace,
    add_workspace,
    channel_service,
    find_tenant,
    list_workspaces,
    map_channel,
    remove_workspace,
)

__all__ = [
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
]
