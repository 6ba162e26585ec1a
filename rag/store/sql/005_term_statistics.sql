-- Each tenant's own keyword statistics for BM25 (rag/retrieve.py) and the answerability gate
-- (rag/gate.py): how many current chunks hold each lexeme, and how many current chunks there are
-- and how long they are. ts_rank knows neither, so a word every runbook of a tenant uses
-- ("alert", "pod") ranked like the one that names the problem.
--
-- Statement-level triggers keep both tables in step with chunks: an insert, a delete, or a flip
-- of `superseded` adjusts the counts of the rows it touched, in the same transaction, so a
-- reader never sees statistics of a half-ingested document.
CREATE TABLE term_stats (
    tenant_id text NOT NULL,
    lexeme    text NOT NULL,
    -- No CHECK (df >= 0): Postgres checks the row an upsert proposes before it merges it, and
    -- a decrement proposes a negative one. Rows that fall to 0 stay; readers ask for df > 0.
    df        integer NOT NULL,
    PRIMARY KEY (tenant_id, lexeme)
);

CREATE TABLE tenant_text_stats (
    tenant_id    text PRIMARY KEY,
    chunks       integer NOT NULL,
    total_length bigint NOT NULL
);

-- Adds `sign` times the counts of the given chunks (the caller passes only current ones).
CREATE FUNCTION term_stats_apply(tenants text[], vectors tsvector[], sign integer) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO term_stats AS s (tenant_id, lexeme, df)
    SELECT c.tenant_id, l.lexeme, sign * count(*)
    FROM unnest(tenants, vectors) AS c(tenant_id, tsv), unnest(tsvector_to_array(c.tsv)) AS l(lexeme)
    GROUP BY c.tenant_id, l.lexeme
    ORDER BY c.tenant_id, l.lexeme
    ON CONFLICT (tenant_id, lexeme) DO UPDATE SET df = s.df + excluded.df;
    INSERT INTO tenant_text_stats AS t (tenant_id, chunks, total_length)
    SELECT c.tenant_id, sign * count(*), sign * sum(length(c.tsv))
    FROM unnest(tenants, vectors) AS c(tenant_id, tsv)
    GROUP BY c.tenant_id
    ORDER BY c.tenant_id
    ON CONFLICT (tenant_id) DO UPDATE
        SET chunks = t.chunks + excluded.chunks, total_length = t.total_length + excluded.total_length;
$$;

CREATE FUNCTION term_stats_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM term_stats_apply(array_agg(tenant_id), array_agg(tsv), 1)
    FROM inserted WHERE NOT superseded HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE FUNCTION term_stats_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM term_stats_apply(array_agg(tenant_id), array_agg(tsv), -1)
    FROM deleted WHERE NOT superseded HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE FUNCTION term_stats_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Only rows whose visibility or text changed move the counts (ingest flips `superseded`).
    PERFORM term_stats_apply(array_agg(o.tenant_id), array_agg(o.tsv), -1)
    FROM before AS o JOIN after AS n USING (tenant_id, chunk_id)
    WHERE NOT o.superseded AND (n.superseded OR o.tsv IS DISTINCT FROM n.tsv)
    HAVING count(*) > 0;
    PERFORM term_stats_apply(array_agg(n.tenant_id), array_agg(n.tsv), 1)
    FROM before AS o JOIN after AS n USING (tenant_id, chunk_id)
    WHERE NOT n.superseded AND (o.superseded OR o.tsv IS DISTINCT FROM n.tsv)
    HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_term_stats_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION term_stats_on_insert();
CREATE TRIGGER chunks_term_stats_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION term_stats_on_delete();
CREATE TRIGGER chunks_term_stats_update AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS before NEW TABLE AS after
    FOR EACH STATEMENT EXECUTE FUNCTION term_stats_on_update();

-- Backfill from the chunks already stored.
INSERT INTO term_stats (tenant_id, lexeme, df)
SELECT tenant_id, lexeme, count(*)
FROM chunks, unnest(tsvector_to_array(tsv)) AS l(lexeme)
WHERE NOT superseded
GROUP BY tenant_id, lexeme;
INSERT INTO tenant_text_stats (tenant_id, chunks, total_length)
SELECT tenant_id, count(*), sum(length(tsv)) FROM chunks WHERE NOT superseded GROUP BY tenant_id;

-- The same tenant boundary as documents and chunks (003): retrieval reads these as
-- runbook_reader, which sees only the tenant its transaction names.
GRANT SELECT ON term_stats, tenant_text_stats TO runbook_reader;
ALTER TABLE term_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_text_stats ENABLE ROW LEVEL SECURITY;
CREATE POLICY term_stats_of_current_tenant ON term_stats FOR SELECT TO runbook_reader
    USING (tenant_id = current_setting('runbook.tenant_id', true));
CREATE POLICY tenant_text_stats_of_current_tenant ON tenant_text_stats FOR SELECT
    TO runbook_reader USING (tenant_id = current_setting('runbook.tenant_id', true));
