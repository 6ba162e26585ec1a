-- Fair job claims (issue 27): a job carries its tenant from intake (`jobs.tenant_id`, resolved in
-- the intake INSERT itself), and `next_job` hands a worker the oldest job of the tenant whose
-- turn it is, among the kinds that worker serves. One tenant's storm no longer queues every
-- other tenant behind it, and a replica never claims a kind it has no handler for.

-- Each tenant's claimable jobs in order; jobs without a tenant share the key ''.
CREATE INDEX jobs_tenant_claimable ON jobs (coalesce(tenant_id, ''), available_at)
    WHERE state IN ('queued', 'running');

-- When each tenant was last handed a job: the round-robin's order of turns.
CREATE TABLE job_turns (
    tenant_key text PRIMARY KEY,
    served_at  timestamptz NOT NULL
);

-- The job a worker claims next, locked for the caller's UPDATE; NULL when there is none.
-- Tenants take turns, the one served longest ago first (a tenant never served before goes
-- first of all); within a tenant the oldest job. Tenants in p_full (at the caller's cap on jobs
-- in flight) are passed over. p_kinds: the kinds the caller has handlers for; any other kind
-- stays queued for a replica that serves it.
CREATE FUNCTION next_job(p_kinds text[], p_full text[])
RETURNS uuid
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    turn record;
    picked uuid;
BEGIN
    FOR turn IN
        -- The tenants with unfinished jobs, read off the index one key at a time (a loose index
        -- scan): a storm of one tenant's jobs costs a single step, not a scan of the storm.
        WITH RECURSIVE tenants AS (
            (SELECT coalesce(tenant_id, '') AS tenant_key FROM jobs
             WHERE state IN ('queued', 'running')
             ORDER BY coalesce(tenant_id, '') LIMIT 1)
            UNION ALL
            SELECT (SELECT coalesce(j.tenant_id, '') FROM jobs AS j
                    WHERE j.state IN ('queued', 'running')
                      AND coalesce(j.tenant_id, '') > t.tenant_key
                    ORDER BY coalesce(j.tenant_id, '') LIMIT 1)
            FROM tenants AS t
            WHERE t.tenant_key IS NOT NULL
        )
        SELECT t.tenant_key
        FROM tenants AS t LEFT JOIN job_turns AS s USING (tenant_key)
        WHERE t.tenant_key IS NOT NULL AND t.tenant_key <> ALL (p_full)
        ORDER BY s.served_at NULLS FIRST, t.tenant_key
    LOOP
        SELECT j.job_id INTO picked
        FROM jobs AS j
        WHERE coalesce(j.tenant_id, '') = turn.tenant_key
          AND j.state IN ('queued', 'running') AND j.available_at <= now()
          AND j.kind = ANY (p_kinds)
        ORDER BY j.available_at
        LIMIT 1
        FOR UPDATE SKIP LOCKED;
        IF picked IS NOT NULL THEN
            INSERT INTO job_turns (tenant_key, served_at) VALUES (turn.tenant_key, clock_timestamp())
            ON CONFLICT (tenant_key) DO UPDATE SET served_at = excluded.served_at;
            RETURN picked;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- Follow-ups without a mention become opt-in per channel (`runbook channel follow-ups … on`).
-- Rows written so far took `true` from the old default when alerts were switched on, not from a
-- choice (switching on what was already on did nothing), so every channel starts off.
ALTER TABLE channel_settings ALTER COLUMN follow_ups SET DEFAULT false;
UPDATE channel_settings SET follow_ups = false WHERE follow_ups;
