-- Wake-ups, not polling (issue 41): a job that becomes claimable now (queued by intake, or put
-- back in line at once by a drain or a lease release) is announced on the `runbook_jobs`
-- channel, so idle workers (`LISTEN runbook_jobs`, bot/core/jobs/wakeups.py) claim it within
-- milliseconds and otherwise cost nothing. A job put back for later (a retry's backoff) is not
-- announced: its worker wakes itself, and every worker still polls slowly as the fallback.
-- Postgres sends notifications at commit and folds identical payloads of one transaction.
CREATE FUNCTION announce_claimable_job() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('runbook_jobs', NEW.kind);
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_announce_claimable
    AFTER INSERT OR UPDATE OF state, available_at ON jobs
    FOR EACH ROW
    WHEN (NEW.state = 'queued' AND NEW.available_at <= now())
    EXECUTE FUNCTION announce_claimable_job();

-- How many jobs of a kind run now (the claim's cap on a deployment's source syncs): the few
-- leased rows, not every unfinished job.
CREATE INDEX jobs_running_kind ON jobs (kind) WHERE state = 'running';
