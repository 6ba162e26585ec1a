-- The durable work queue (bot/core/jobs.py): every accepted question is a row here before its
-- ack, so a crashed or redeployed process never loses it; any replica's worker finishes it.
CREATE TABLE jobs (
    job_id       uuid PRIMARY KEY,
    kind         text NOT NULL,                 -- a handler name, e.g. 'slack.mention'
    -- One job per delivery: a Slack event id, a command's trigger id, a Teams activity id.
    dedupe_key   text NOT NULL UNIQUE,
    payload      jsonb NOT NULL,                -- the surface's own request; emptied when done
    state        text NOT NULL DEFAULT 'queued'
                 CHECK (state IN ('queued', 'running', 'done', 'dead')),
    attempts     integer NOT NULL DEFAULT 0,    -- claims so far (a re-run after a crash counts)
    max_attempts integer NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    deadline_at  timestamptz NOT NULL,          -- past it, the asker gets "ask again" instead
    -- When a worker may claim it: 'queued' from then on, 'running' once its lease ran out.
    available_at timestamptz NOT NULL DEFAULT now(),
    lease_token  uuid,                          -- the current claim; heartbeats must match it
    worker       text,
    -- The answer this job stored, so a re-run reposts that answer (or finds it posted).
    tenant_id    text,
    answer_id    uuid,
    finished_at  timestamptz,
    outcome      text
);
CREATE INDEX jobs_claimable ON jobs (available_at) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state IN ('done', 'dead');
