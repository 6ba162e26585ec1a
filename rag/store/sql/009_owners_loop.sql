-- The runbook owners' loop: where a runbook's age came from, 👎 reasons, text-free answer facts
-- (they outlive text retention), owner routing and a durable queue of owner notifications.

-- documents.updated holds the runbook's last update as YYYY-MM-DD when it could be resolved:
-- frontmatter `updated`, else the file's last git commit, else its mtime (rag/staleness.py).
ALTER TABLE documents ADD COLUMN updated_source text
    CHECK (updated_source IN ('frontmatter', 'git', 'mtime'));

-- What every answer or abstention says about the runbooks, written when it is stored; no
-- question or answer text, so it stays after RUNBOOK_RETAIN_TEXT_DAYS.
CREATE TABLE answer_facts (
    tenant_id  text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    answer_id  uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    status     text NOT NULL CHECK (status IN ('answered', 'abstained')),
    service    text,
    -- 'alert:KubePodCrashLooping', 'service:payments', 'term:certificate'
    topics     text[] NOT NULL DEFAULT '{}',
    -- Cited runbooks (answered) or the nearest ones (abstained), best first, with the version
    -- seen then: a gap closes when its runbook changes.
    documents  text[] NOT NULL DEFAULT '{}',
    versions   integer[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant_id, answer_id)
);
CREATE INDEX answer_facts_created ON answer_facts (tenant_id, created_at);

-- A vote outlives its answer's text: the answers row is deleted at the end of retention, the
-- vote (ids, value, reason) stays for the counts.
ALTER TABLE feedback DROP CONSTRAINT IF EXISTS feedback_tenant_id_answer_id_fkey;
ALTER TABLE feedback ADD FOREIGN KEY (tenant_id) REFERENCES tenants ON DELETE CASCADE;
ALTER TABLE feedback
    ADD COLUMN reason text
        CHECK (reason IN ('wrong_runbook', 'outdated', 'missing_steps', 'unclear', 'other')),
    ADD COLUMN comment text,
    ADD COLUMN documents text[] NOT NULL DEFAULT '{}';

-- `runbook owner map TENANT NAME TARGET`; name '' is `runbook owner default TENANT TARGET`.
CREATE TABLE owner_targets (
    tenant_id text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    name      text NOT NULL,
    target    text NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

-- One row per runbook that has ever had a notification: the batching clock, and the row a
-- flushing replica locks (FOR UPDATE SKIP LOCKED) so two replicas never send the same batch.
CREATE TABLE owner_batches (
    tenant_id    text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    document_id  text NOT NULL,
    last_sent_at timestamptz,
    PRIMARY KEY (tenant_id, document_id)
);

-- 👎 reasons waiting for (or already in) a message to the runbook's owner. One per voter, answer
-- and runbook: a changed reason replaces the pending one.
CREATE TABLE owner_notifications (
    tenant_id   text NOT NULL,
    answer_id   uuid NOT NULL,
    user_id     text NOT NULL,
    document_id text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    reason      text NOT NULL,
    -- The workspace the vote came from: its bot token sends the owner's message.
    enterprise_id text NOT NULL DEFAULT '',
    team_id     text NOT NULL DEFAULT '',
    -- Text, cleared with the rest at the end of retention.
    comment     text,
    question    text,
    quote       text,
    permalink   text,
    -- NULL while pending; then 'sent', 'unrouted' (no owner, no fallback) or 'failed:<error>'.
    outcome     text,
    target      text,
    sent_at     timestamptz,
    PRIMARY KEY (tenant_id, answer_id, user_id, document_id),
    FOREIGN KEY (tenant_id, document_id) REFERENCES owner_batches ON DELETE CASCADE
);
CREATE INDEX owner_notifications_pending ON owner_notifications (tenant_id, document_id)
    WHERE outcome IS NULL;
