-- Retrieval at a million chunks (issue 15): `chunks` becomes partitioned by tenant, and its
-- embeddings half precision.
--
-- Layout: a large tenant gets a LIST partition of its own (created by `runbook db rebalance`,
-- rag/partitions.py), with its own HNSW and GIN, so the planner prunes to one partition and the
-- graph holds only that tenant's vectors. Everyone else shares the DEFAULT partition, itself
-- hashed on tenant_id into 8 buckets. The shared buckets carry no HNSW index: their tenants are
-- small enough to scan exactly (rag/service.py), and skipping that index saves most of the index
-- memory. This migration converts in place; chunk ids are kept.

-- The old table, its HNSW indexes and its triggers go once the rows are copied.
ALTER TABLE chunks RENAME TO chunks_unpartitioned;
ALTER TABLE chunks_unpartitioned RENAME CONSTRAINT chunks_pkey TO chunks_unpartitioned_pkey;
ALTER INDEX chunks_document RENAME TO chunks_unpartitioned_document;
ALTER INDEX chunks_tsv RENAME TO chunks_unpartitioned_tsv;
ALTER INDEX chunks_current RENAME TO chunks_unpartitioned_current;

-- Postgres 16 has no identity columns on partitioned tables; a sequence does the same job.
CREATE SEQUENCE chunk_ids AS bigint;
SELECT setval('chunk_ids', coalesce(max(chunk_id), 0) + 1, false) FROM chunks_unpartitioned;

CREATE TABLE chunks (
    tenant_id       text NOT NULL,
    chunk_id        bigint NOT NULL DEFAULT nextval('chunk_ids'),
    document_id     text NOT NULL,
    version         integer NOT NULL,
    ordinal         integer NOT NULL,
    heading_path    text[] NOT NULL,
    content         text NOT NULL CHECK (content <> ''),
    -- Copied from the document so retrieval filters on this table alone (no join before the
    -- index scan); flipped in the same transaction as the document's flag.
    superseded      boolean NOT NULL DEFAULT false,
    service         text,
    -- Half precision (pgvector >= 0.7): half the table and index size, recall@10 >= 0.99
    -- against the float32 ranking (measured, see docs/scaling.md). Unsized so two models of
    -- different dimensions can coexist; each dedicated partition gets one partial HNSW index
    -- per dimension on embedding::halfvec(D) (rag/store.py ensure_vector_index).
    embedding       halfvec NOT NULL,
    embedding_model text NOT NULL,
    embedding_dim   integer NOT NULL,
    tsv             tsvector NOT NULL,
    PRIMARY KEY (tenant_id, chunk_id),
    FOREIGN KEY (tenant_id, document_id, version)
        REFERENCES documents (tenant_id, document_id, version) ON DELETE CASCADE
) PARTITION BY LIST (tenant_id);
ALTER SEQUENCE chunk_ids OWNED BY chunks.chunk_id;
-- MAIN keeps the vector in the row (content and tsv are toasted first), so an exact scan does
-- not detoast every row; unlike PLAIN it still lets a very wide vector move out as a last resort.
ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN;

CREATE TABLE chunks_shared PARTITION OF chunks DEFAULT PARTITION BY HASH (tenant_id);
DO $$
BEGIN
    FOR bucket IN 0..7 LOOP
        EXECUTE format(
            'CREATE TABLE %I PARTITION OF chunks_shared FOR VALUES WITH (MODULUS 8, REMAINDER %s)',
            'chunks_shared_' || bucket, bucket);
    END LOOP;
END
$$;

-- Partitioned indexes: every partition, shared or dedicated, has these.
CREATE INDEX chunks_document ON chunks (tenant_id, document_id, version);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_current ON chunks (tenant_id, service) WHERE NOT superseded;

-- No trigger exists on the new table yet, so the copy leaves term_stats as it was (exact).
INSERT INTO chunks (tenant_id, chunk_id, document_id, version, ordinal, heading_path, content,
                    superseded, service, embedding, embedding_model, embedding_dim, tsv)
SELECT tenant_id, chunk_id, document_id, version, ordinal, heading_path, content,
       superseded, service, embedding::halfvec, embedding_model, embedding_dim, tsv
FROM chunks_unpartitioned;
DROP TABLE chunks_unpartitioned;

-- Transition tables on a partitioned table: statement-level triggers only. They fire for
-- statements on `chunks` itself; rebalance moves rows with statements on the partitions, which
-- fire none, so moving a tenant leaves its statistics untouched (and exact).
CREATE TRIGGER chunks_term_stats_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION term_stats_on_insert();
CREATE TRIGGER chunks_term_stats_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION term_stats_on_delete();
CREATE TRIGGER chunks_term_stats_update AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS before NEW TABLE AS after
    FOR EACH STATEMENT EXECUTE FUNCTION term_stats_on_update();

-- Row-level security as in 003. Policies of the parent apply to queries on the parent only, so
-- runbook_reader gets no privilege on any partition: naming one directly is "permission
-- denied", never a way around the policy. Partitions created later get no grant either.
GRANT SELECT ON chunks TO runbook_reader;
ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;
CREATE POLICY chunks_of_current_tenant ON chunks FOR SELECT TO runbook_reader
    USING (tenant_id = current_setting('runbook.tenant_id', true));

-- Which tenants have a partition of their own (written by rebalance in the same transaction
-- that attaches or detaches it). Retrieval reads it to choose HNSW or an exact scan.
CREATE TABLE tenant_partitions (
    tenant_id  text PRIMARY KEY,
    table_name text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);
GRANT SELECT ON tenant_partitions TO runbook_reader;
ALTER TABLE tenant_partitions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_partitions_of_current_tenant ON tenant_partitions FOR SELECT
    TO runbook_reader USING (tenant_id = current_setting('runbook.tenant_id', true));

-- The new partitions start without planner statistics; retrieval's plans need them at once.
ANALYZE chunks;
