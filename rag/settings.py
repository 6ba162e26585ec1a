"""Configuration: one ``Settings`` read once by an entry point and passed down."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# ONNX Runtime threads per embedding call when RUNBOOK_ONNX_THREADS is unset: two for ingestion
# and one-off commands; one in a serving process, whose event loop (and, on a small replica,
# Postgres) needs the other core: a second ONNX thread spins on a core the answers wait for
# (docs/benchmarks.md, "Where an answer's time goes").
BATCH_ONNX_THREADS = 2
SERVING_ONNX_THREADS = 1
# Jobs in flight per replica when RUNBOOK_JOB_CONCURRENCY is unset (see ``Settings.job_slots``),
# and one tenant's share of them when RUNBOOK_JOB_TENANT_CONCURRENCY is.
EXTRACTIVE_JOB_SLOTS = 3
CLAUDE_JOB_SLOTS = 8
TENANT_JOB_SLOTS = 6


def _default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "runbook-bot"


class Settings(BaseSettings):
    """Every option, read from the environment (and ``.env`` if present).

    docs/configuration.md lists these (the README only the essential ones); keep them in step.
    """

    model_config = SettingsConfigDict(
        env_prefix="RUNBOOK_", env_file=".env", extra="ignore", populate_by_name=True
    )

    database_url: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "database_url")
    )
    data_dir: Path = Field(default_factory=_default_data_dir)
    pool_min_size: int = Field(default=1, ge=0)
    pool_max_size: int = Field(default=10, ge=1)
    pool_timeout_s: float = Field(default=5.0, gt=0)

    # PgBouncer (transaction pooling): psycopg prepares a statement after it ran this many
    # times, and a prepared statement lives on one server connection; "none" never prepares.
    # Migrations hold a session lock, so they connect directly (default: DATABASE_URL).
    prepare_threshold: int | None = Field(default=5, ge=0)
    migration_database_url: SecretStr | None = None

    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    embedding_model_path: Path | None = None
    onnx_threads: int | None = Field(default=None, ge=1)
    # Padded tokens per ONNX batch (texts are batched by length, shortest first), and the word
    # pieces of a text the model reads; the latter is part of the stored embedding model id.
    embed_batch_tokens: int = Field(default=2_048, ge=64)
    embed_max_tokens: int = Field(default=512, ge=16)

    max_file_bytes: int = Field(default=1_000_000, ge=1)
    chunk_max_chars: int = Field(default=1_500, ge=200)
    chunk_overlap_chars: int = Field(default=150, ge=0)

    top_k: int = Field(default=10, ge=1, le=100)
    # --- Partitions (issue 15): a tenant with more current chunks than partition_min_chunks gets
    # a partition of its own (its own GIN, and its own HNSW above exact_search_max_chunks) at
    # the next `runbook db rebalance`, and moves back below half of it. Retrieval scans a tenant
    # exactly unless it has a partition of its own and more than exact_search_max_chunks chunks:
    # an exact scan of one partition's inline halfvec rows is a few ms at 20,000 and exact,
    # while a graph per small partition would cost index memory for no gain.
    partition_min_chunks: int = Field(default=1_000, ge=1)
    exact_search_max_chunks: int = Field(default=20_000, ge=0)
    # Answer quality (issue 11): a service-scoped search reruns unscoped below min_cosine; the
    # gate answers when its calibrated probability is at least answer_threshold (None: the
    # operating point stored with the model); gate_model_path replaces rag/gate/gate_model.json and
    # rank_model_path rag/retrieval/rank_model.json (to compare refits without code).
    min_cosine: float = Field(default=0.30, ge=-1.0, le=1.0)
    answer_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    gate_model_path: Path | None = None
    rank_model_path: Path | None = None
    max_chunks_per_document: int = Field(default=3, ge=1)
    context_max_chars: int = Field(default=12_000, ge=500)
    max_question_chars: int = Field(default=2_000, ge=10)
    trace_text: bool = False
    # Who may open a runbook pull request from a thread (issue 40): tenant admins and runbook
    # owners, or with RUNBOOK_DRAFT_PR_ANYONE=true anyone in the workspace.
    draft_pr_anyone: bool = False

    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_API_KEY", "anthropic_api_key")
    )
    anthropic_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_BASE_URL", "anthropic_base_url")
    )
    anthropic_model: str = "claude-sonnet-4-6"
    answer_timeout_s: float = Field(default=20.0, gt=0)
    answer_max_retries: int = Field(default=1, ge=0, le=5)

    slack_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN", "slack_bot_token")
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_SIGNING_SECRET", "slack_signing_secret")
    )
    slack_app_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN", "slack_app_token")
    )
    slack_client_id: str | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_CLIENT_ID", "slack_client_id")
    )
    slack_client_secret: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_CLIENT_SECRET", "slack_client_secret")
    )
    slack_api_url: str = Field(
        default="https://slack.com/api/",
        validation_alias=AliasChoices("SLACK_API_URL", "slack_api_url"),
    )
    # Microsoft Teams (bot/teams): the Azure bot registration (single-tenant), and the local
    # mode for tests and trying it out (no inbound token required, outbound calls unsigned).
    teams_app_id: str | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_APP_ID", "teams_app_id")
    )
    teams_app_password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_APP_PASSWORD", "teams_app_password")
    )
    teams_tenant_id: str | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_TENANT_ID", "teams_tenant_id")
    )
    teams_allow_unauthenticated: bool = Field(
        default=False,
        validation_alias=AliasChoices("TEAMS_ALLOW_UNAUTHENTICATED", "teams_allow_unauthenticated"),
    )
    # Where inbound tokens' signing keys are fetched; unset = the Bot Framework / Entra ID key
    # endpoints the token's issuer names (an override is for sovereign clouds and tests).
    teams_jwks_url: str | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_JWKS_URL", "teams_jwks_url")
    )
    # Signing keys are refetched after this many seconds; if the key endpoint then fails, the
    # cached keys keep verifying tokens for the grace period (Microsoft rotates keys with weeks
    # of overlap), and only with no usable keys at all is a request answered 503.
    teams_keys_ttl_s: float = Field(
        default=3600.0,
        gt=0,
        validation_alias=AliasChoices("TEAMS_KEYS_TTL_S", "teams_keys_ttl_s"),
    )
    teams_keys_grace_s: float = Field(
        default=86400.0,
        ge=0,
        validation_alias=AliasChoices("TEAMS_KEYS_GRACE_S", "teams_keys_grace_s"),
    )
    # Alert posts by apps (Workflows, connectors) through Microsoft Graph change notifications
    # (bot/teams/graph_*.py, docs/teams-incident-channels.md): a subscription per channel with
    # alerts on, notifications on RUNBOOK_PUBLIC_URL + /hooks/graph/teams. The URLs are
    # Microsoft's; an override is for sovereign clouds and tests. The service URL answers a
    # Graph-delivered post (a notification carries none): Microsoft's public-cloud endpoint.
    teams_graph_alerts: bool = Field(
        default=False,
        validation_alias=AliasChoices("TEAMS_GRAPH_ALERTS", "teams_graph_alerts"),
    )
    teams_graph_url: str = Field(
        default="https://graph.microsoft.com/v1.0",
        validation_alias=AliasChoices("TEAMS_GRAPH_URL", "teams_graph_url"),
    )
    teams_login_url: str = Field(
        default="https://login.microsoftonline.com",
        validation_alias=AliasChoices("TEAMS_LOGIN_URL", "teams_login_url"),
    )
    teams_service_url: str = Field(
        default="https://smba.trafficmanager.net/teams/",
        validation_alias=AliasChoices("TEAMS_SERVICE_URL", "teams_service_url"),
    )

    # Measured with bench/slack_mentions.py (10 questions in flight): 4 keeps ack p99 low with
    # the extractive answerer, whose work is CPU; an I/O-bound answerer (Claude) can take more.
    max_concurrent_answers: int = Field(default=4, ge=1)
    # Incident channel (issue 13): proactive alert answers. The same alert (name + key labels)
    # posted again in a channel within this many minutes gets no second answer.
    alert_repeat_window_min: int = Field(default=60, ge=1)
    host: str = "0.0.0.0"
    port: int = Field(default=3000, ge=1, le=65535)

    # Durable work queue (bot/core/jobs/queue.py): every accepted question survives a crashed
    # replica.
    job_deadline_s: float = Field(default=300.0, gt=0)
    job_max_attempts: int = Field(default=5, ge=1, le=50)
    job_lease_s: float = Field(default=30.0, ge=1.0)
    # A worker hears of new jobs at once (LISTEN/NOTIFY, migration 026); this slow poll is
    # only the fallback for a lost listening connection and for jobs put back for later.
    job_poll_s: float = Field(default=5.0, gt=0)
    # Jobs a replica runs at once (unset: ``job_slots``), and how many of them one tenant may
    # hold: the rest stay free for other tenants' work (issue 27). Keep the tenant's share at or
    # above max_concurrent_answers, so a tenant alone still uses every answer slot.
    job_concurrency: int | None = Field(default=None, ge=1)
    job_tenant_concurrency: int | None = Field(default=None, ge=1)
    job_retention_h: float = Field(default=24.0, gt=0)
    intake_pool_size: int = Field(default=3, ge=1)
    # Roles (issue 41): `runbook serve --role all` runs one web process and this many worker
    # processes (unset: one per core it may use), the workers at this much lower priority than
    # the web process, so an ack never waits for a core behind answer work; the web process
    # (and its intake connections' backends on this machine) ask for this short a time slice
    # (0: the kernel's default). See bot.cpu_priority.
    workers: int | None = Field(default=None, ge=1)
    worker_nice: int = Field(default=19, ge=0, le=19)
    web_slice_us: int = Field(default=100, ge=0, le=100_000)
    # Slack: an answer not posted this long after its request arrived shows progress (a status
    # in the thread, a reaction on the question); one posted sooner shows none (0: always).
    progress_after_ms: int = Field(default=500, ge=0, le=900)
    # Source syncs running at once in the whole deployment; the rest wait in the queue, so
    # syncs never take every worker.
    source_sync_concurrency: int = Field(default=1, ge=1)
    intake_timeout_s: float = Field(default=1.0, gt=0)

    # --- Bot hardening (issue 10): tokens at rest, internal health/metrics port, shutdown ---
    # Comma-separated Fernet keys: the first encrypts, all decrypt (rotation). Required for OAuth.
    encryption_keys: SecretStr | None = None
    # /healthz and /metrics live here, not on the public Slack port. All interfaces by default so
    # kubelet probes and Prometheus reach the pod IP; never route this port from an ingress.
    internal_host: str = "0.0.0.0"
    internal_port: int = Field(default=9090, ge=0, le=65535)
    # Answers in flight get this long after SIGTERM; below Docker's default 10 s stop timeout.
    drain_timeout_s: float = Field(default=8.0, ge=0)

    # Owners' loop (issue 14): text retention, runbook staleness, owner notifications.
    retain_text_days: int = Field(default=30, ge=1)
    stale_after_days: int = Field(default=365, ge=1)
    owner_batch_minutes: int = Field(default=60, ge=1)
    owner_flush_interval_s: float = Field(default=60.0, gt=0)

    # Runbook sources (issue 25): `runbook serve` syncs each source this often (and at once on
    # a signed push webhook); the webhook URL that `runbook source add` prints starts with
    # public_url, the address the internet reaches RUNBOOK_PORT at (https://runbooks.example.com).
    source_sync_interval_min: float = Field(default=15.0, gt=0)
    # A sync job's deadline: a first sync of a large space embeds for minutes (500 Confluence
    # pages: 2.5 min on a quiet 2-core machine), far past an answer's RUNBOOK_JOB_DEADLINE_S.
    source_sync_deadline_s: float = Field(default=3600.0, gt=0)
    # A sync reads, embeds and writes its items in batches of at most 50 items and this many
    # bytes of files or page bodies (see docs/sources.md for the measurement behind it).
    sync_batch_bytes: int = Field(default=4_000_000, ge=1)
    public_url: str | None = None
    # What sources may reach (issue 36, rag/sources/access.py): public https addresses only.
    # The first allows loopback and private addresses (and plain http to them) for a
    # self-hosted Confluence or GitLab inside the network; the second file:// git sources, for
    # tests and local trials, never inside data_dir. Link-local addresses stay refused.
    source_allow_private_networks: bool = False
    source_allow_file: bool = False

    # Self-service (issue 39): a workspace or organisation that installs the app gets its own
    # tenant, its installer as first admin; an uninstalled tenant's runbooks and settings are
    # kept this many days (a reinstall finds them), then deleted.
    self_service: bool = True
    uninstall_retention_days: int = Field(default=30, ge=0)

    @field_validator("prepare_threshold", mode="before")
    @classmethod
    def _none_disables_preparing(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in ("", "none", "off"):
            return None
        return value

    @model_validator(mode="after")
    def _overlap_below_cap(self) -> Settings:
        if self.chunk_overlap_chars >= self.chunk_max_chars:
            raise ValueError(
                "RUNBOOK_CHUNK_OVERLAP_CHARS must be smaller than RUNBOOK_CHUNK_MAX_CHARS"
            )
        return self

    @property
    def job_slots(self) -> int:
        """``job_concurrency``, else by answerer. The extractive answerer's work is CPU on the
        one event loop: past three jobs, more in flight only queue in front of the acks (ack
        p99 2-3x higher at eight, no more answers/s; docs/benchmarks.md). Claude's answers
        wait on the network, so eight overlap."""
        if self.job_concurrency is not None:
            return self.job_concurrency
        return EXTRACTIVE_JOB_SLOTS if self.anthropic_api_key is None else CLAUDE_JOB_SLOTS

    @property
    def worker_processes(self) -> int:
        """``workers``, else one per core this process may run on."""
        if self.workers is not None:
            return self.workers
        return max(1, len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else 1

    @property
    def job_tenant_slots(self) -> int:
        """``job_tenant_concurrency``, else six of the replica's slots (all, when fewer)."""
        if self.job_tenant_concurrency is not None:
            return self.job_tenant_concurrency
        return min(TENANT_JOB_SLOTS, self.job_slots)

    @property
    def embedding_threads(self) -> int:
        """ONNX Runtime threads per embedding call (``onnx_threads``, else the batch default)."""
        return self.onnx_threads or BATCH_ONNX_THREADS

    def serving(self) -> Settings:
        """These settings for a process that serves chat: one ONNX thread unless configured."""
        if self.onnx_threads is not None:
            return self
        return self.model_copy(update={"onnx_threads": SERVING_ONNX_THREADS})

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pgdata"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"
