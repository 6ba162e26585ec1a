-- The Slack app's state: delivery dedupe, answers behind buttons, feedback, OAuth installs.
-- As in 001, tables holding tenant data lead their primary key with tenant_id.

-- Events API deliveries already seen (at-least-once delivery; Slack retries for ~5 minutes).
CREATE TABLE events_seen (
    event_id text PRIMARY KEY,
    seen_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_seen_at ON events_seen (seen_at);

-- One row per answer card: everything needed to re-render it (Show quote, Share, Retry)
-- without trusting anything but the answer id in a button value.
CREATE TABLE answers (
    tenant_id     text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    answer_id     uuid NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    entry         text NOT NULL CHECK (entry IN ('mention', 'command', 'shortcut')),
    question      text NOT NULL,
    service       text,
    -- The card's inputs: status, reason, answer text, citations (quote + evidence), evidence.
    result        jsonb NOT NULL,
    expanded      integer[] NOT NULL DEFAULT '{}',
    enterprise_id text NOT NULL DEFAULT '',
    team_id       text NOT NULL,
    channel_id    text,
    thread_ts     text,
    message_ts    text,
    ephemeral     boolean NOT NULL DEFAULT false,
    response_url  text,
    shared_by     text,
    shared_at     timestamptz,
    PRIMARY KEY (tenant_id, answer_id)
);
CREATE INDEX answers_created ON answers (tenant_id, created_at);

CREATE TABLE feedback (
    tenant_id text NOT NULL,
    answer_id uuid NOT NULL,
    user_id   text NOT NULL,
    value     text NOT NULL CHECK (value IN ('up', 'down')),
    at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, answer_id, user_id),
    FOREIGN KEY (tenant_id, answer_id) REFERENCES answers ON DELETE CASCADE
);

-- Multi-workspace OAuth (slack_sdk Installation / Bot as JSON). '' rather than NULL for absent
-- ids so they can be key columns; an org-wide install has team_id ''.
CREATE TABLE slack_installations (
    client_id     text NOT NULL,
    enterprise_id text NOT NULL DEFAULT '',
    team_id       text NOT NULL DEFAULT '',
    user_id       text NOT NULL DEFAULT '',
    installation  jsonb NOT NULL,
    installed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, enterprise_id, team_id, user_id)
);

CREATE TABLE slack_bots (
    client_id     text NOT NULL,
    enterprise_id text NOT NULL DEFAULT '',
    team_id       text NOT NULL DEFAULT '',
    bot           jsonb NOT NULL,
    installed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, enterprise_id, team_id)
);

CREATE TABLE slack_oauth_states (
    state      text PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
