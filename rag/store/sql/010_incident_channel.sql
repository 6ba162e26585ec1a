-- The incident channel (issue 13): per-channel opt-ins, alert repeat windows and mutes, threads
-- the bot stopped following, and DM intros already given. All keyed by the workspace's tenant.

-- Per-channel switches set with `runbook channel alerts|follow-ups`. No row: alerts off,
-- follow-ups on.
CREATE TABLE channel_settings (
    tenant_id  text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    team_id    text NOT NULL,
    channel_id text NOT NULL,
    alerts     boolean NOT NULL DEFAULT false,
    follow_ups boolean NOT NULL DEFAULT true,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, team_id, channel_id)
);

-- The last time an alert (name + key labels) was taken up in a channel: a repeat inside the
-- window is claimed by nobody, whichever replica sees it.
CREATE TABLE alert_fingerprints (
    tenant_id   text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    fingerprint text NOT NULL,
    alert_name  text NOT NULL,
    claimed_at  timestamptz NOT NULL DEFAULT now(),
    answer_id   uuid,
    PRIMARY KEY (tenant_id, team_id, channel_id, fingerprint)
);
CREATE INDEX alert_fingerprints_answer ON alert_fingerprints (tenant_id, answer_id);

-- "Mute this alert here": by alert name, until the channel's alerts are switched on again.
CREATE TABLE muted_alerts (
    tenant_id  text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    team_id    text NOT NULL,
    channel_id text NOT NULL,
    alert_name text NOT NULL,
    muted_by   text NOT NULL,
    muted_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, team_id, channel_id, alert_name)
);

-- "Stop following this thread".
CREATE TABLE unfollowed_threads (
    tenant_id  text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    team_id    text NOT NULL,
    channel_id text NOT NULL,
    thread_ts  text NOT NULL,
    stopped_by text NOT NULL,
    stopped_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, team_id, channel_id, thread_ts)
);

-- People who have had the DM intro (once per person per workspace).
CREATE TABLE dm_intros (
    team_id    text NOT NULL,
    user_id    text NOT NULL,
    shown_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);

-- New places an answer can come from, and finding the bot's answers in a thread.
ALTER TABLE answers DROP CONSTRAINT answers_entry_check;
ALTER TABLE answers ADD CONSTRAINT answers_entry_check
    CHECK (entry IN ('mention', 'command', 'shortcut', 'alert', 'follow_up', 'dm'));
CREATE INDEX answers_thread ON answers (tenant_id, channel_id, thread_ts);
