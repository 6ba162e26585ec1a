-- Every table holding tenant data leads its primary key and indexes with tenant_id, so it can
-- become a table distributed by tenant without rewriting queries.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE tenants (
    tenant_id   text PRIMARY KEY CHECK (tenant_id ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspaces (
    -- '' rather than NULL for "no enterprise" so the pair can be a primary key.
    enterprise_id text NOT NULL DEFAULT '',
    team_id       text NOT NULL,
    tenant_id     text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (enterprise_id, team_id)
);
CREATE INDEX workspaces_tenant ON workspaces (tenant_id);

CREATE TABLE channel_scopes (
    tenant_id  text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    team_id    text NOT NULL,
    channel_id text NOT NULL,
    service    text NOT NULL,
    PRIMARY KEY (tenant_id, team_id, channel_id)
);

CREATE TABLE documents (
    tenant_id       text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    document_id     text NOT NULL,
    version         integer NOT NULL CHECK (version > 0),
    sha256          text NOT NULL,
    source_path     text NOT NULL,
    title           text NOT NULL,
    service         text,
    tags            text[] NOT NULL DEFAULT '{}',
    owner           text,
    url             text,
    updated         text,
    superseded      boolean NOT NULL DEFAULT false,
    superseded_by   text,
    embedding_model text NOT NULL,
    ingested_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, document_id, version)
);
-- At most one current version per document.
CREATE UNIQUE INDEX documents_current ON documents (tenant_id, document_id) WHERE NOT superseded;

CREATE TABLE chunks (
    tenant_id       text NOT NULL,
    chunk_id        bigint GENERATED ALWAYS AS IDENTITY,
    document_id     text NOT NULL,
    version         integer NOT NULL,
    ordinal         integer NOT NULL,
    heading_path    text[] NOT NULL,
    content         text NOT NULL CHECK (content <> ''),
    -- Copied from the document so retrieval filters on this table alone (no join before the
    -- index scan); flipped in the same transaction as the document's flag.
    superseded      boolean NOT NULL DEFAULT false,
    service         text,
    -- Unsized so two models of different dimensions can coexist; each dimension gets its own
    -- partial HNSW index on embedding::vector(D) (see rag/store.py ensure_vector_index).
    embedding       vector NOT NULL,
    embedding_model text NOT NULL,
    embedding_dim   integer NOT NULL,
    tsv             tsvector NOT NULL,
    PRIMARY KEY (tenant_id, chunk_id),
    FOREIGN KEY (tenant_id, document_id, version)
        REFERENCES documents (tenant_id, document_id, version) ON DELETE CASCADE
);
CREATE INDEX chunks_document ON chunks (tenant_id, document_id, version);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_current ON chunks (tenant_id, service) WHERE NOT superseded;

-- OR over a question's terms: Postgres has AND-building parsers only, so OR the per-term
-- queries together (tsquery_or is the function behind the || operator).
CREATE AGGREGATE tsquery_or_agg(tsquery) (SFUNC = tsquery_or, STYPE = tsquery);

CREATE TABLE retrieval_traces (
    tenant_id        text NOT NULL,
    trace_id         uuid NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    status           text NOT NULL,
    reason_code      text,
    fallback_reason  text,
    service          text,
    provider         text NOT NULL,
    timings_ms       jsonb NOT NULL,
    candidates       jsonb NOT NULL,
    evidence         jsonb NOT NULL,
    input_tokens     integer NOT NULL DEFAULT 0,
    output_tokens    integer NOT NULL DEFAULT 0,
    citations_dropped integer NOT NULL DEFAULT 0,
    -- Only filled when RUNBOOK_TRACE_TEXT is on; off by default for privacy.
    question         text,
    answer           text,
    PRIMARY KEY (tenant_id, trace_id)
);
CREATE INDEX retrieval_traces_created ON retrieval_traces (tenant_id, created_at);
