-- The keyword half's candidate fetch through the GIN index (issue 15).
--
-- Under row-level security Postgres evaluates no condition that is not LEAKPROOF before the
-- policy's, and `tsvector @@ tsquery` is not: as runbook_reader the keyword half could never use
-- a GIN index and read every row of the tenant (50,000 rows, 12,000 pages, ~100 ms for the
-- largest synthetic tenant). This function runs as the tables' owner so the planner may use the
-- index; it returns only rows of the tenant named in BOTH its argument and the transaction's
-- `runbook.tenant_id` (the very setting the policy reads), so a caller that passes another
-- tenant, or forgot to set one, gets nothing. Its body is fixed: the caller supplies values, not
-- SQL, and no expression that could raise on another tenant's row is evaluated.
CREATE FUNCTION tenant_chunks_matching(
    p_tenant text, p_query tsquery, p_dim integer, p_model text, p_service text,
    -- Optional cuts the caller's bound allows: chunks matching p_exclude (already scored), and
    -- chunks longer than p_max_length lexemes (too long to reach the bar).
    p_exclude tsquery DEFAULT NULL, p_max_length double precision DEFAULT NULL
)
RETURNS TABLE (chunk_id bigint, tsv tsvector, heading_tsv tsvector)
LANGUAGE plpgsql STABLE SECURITY DEFINER
-- Each call is planned for its own tenant and terms (PL/pgSQL plans through the plan cache,
-- which would settle on a generic plan): a generic plan cannot prune to the tenant's partition
-- or weigh the GIN index against the tenant's size.
SET plan_cache_mode = force_custom_plan
AS $$
BEGIN
    RETURN QUERY
    SELECT c.chunk_id, c.tsv, c.heading_tsv
    FROM chunks AS c
    WHERE c.tenant_id = p_tenant
      AND p_tenant = current_setting('runbook.tenant_id', true)
      AND NOT c.superseded AND c.embedding_dim = p_dim AND c.embedding_model = p_model
      AND (p_service IS NULL OR c.service = p_service)
      AND c.tsv @@ p_query
      AND (p_exclude IS NULL OR NOT c.tsv @@ p_exclude)
      AND (p_max_length IS NULL OR length(c.tsv) <= p_max_length);
END
$$;

-- A SECURITY DEFINER function must not resolve names through a schema its caller can write (nor
-- the caller's temporary schema first): pin it to the schema the tables live in.
DO $$
BEGIN
    EXECUTE format(
        'ALTER FUNCTION tenant_chunks_matching(text, tsquery, integer, text, text, tsquery, '
        'double precision) SET search_path = %I, pg_temp', current_schema());
END
$$;

REVOKE ALL ON FUNCTION
    tenant_chunks_matching(text, tsquery, integer, text, text, tsquery, double precision)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    tenant_chunks_matching(text, tsquery, integer, text, text, tsquery, double precision)
    TO runbook_reader;
