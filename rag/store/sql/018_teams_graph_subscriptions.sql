-- Teams alert posts through Microsoft Graph (issue 30): posts made by apps (the Workflows
-- webhook, connectors) may never reach the bot as activities, so a channel with alerts on also
-- has a Graph change-notification subscription on /teams/{team}/channels/{channel}/messages.
-- One row per channel: `wanted` follows the channel's alerts switch; `runbook serve` creates,
-- renews and (once unwanted) deletes the Graph subscription, then the row.
CREATE TABLE teams_graph_subscriptions (
    tenant_id       text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    aad_tenant_id   text NOT NULL,
    channel_id      text NOT NULL,
    -- The team's AAD group id (a GUID; the channel link's groupId): Graph names channels by it.
    team_id         text NOT NULL
        CHECK (team_id ~ '^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$'),
    wanted          boolean NOT NULL DEFAULT true,
    -- Graph's id for the live subscription; NULL until it is created.
    subscription_id text UNIQUE,
    -- The clientState Graph echoes in every notification: {"sealed": …} (bot/core/token_cipher.py).
    client_state    jsonb,
    expires_at      timestamptz,
    -- The last Graph failure for this channel (NULL once a call succeeds), for `channel list`.
    last_error      text,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, aad_tenant_id, channel_id),
    CHECK ((subscription_id IS NULL) = (client_state IS NULL))
);
-- What the schedule looks at each round: rows to create, renew or delete.
CREATE INDEX teams_graph_subscriptions_due ON teams_graph_subscriptions (expires_at);

-- Retrieval's role never reads it: only the owner (CLI, serve) does. Row-level security as on
-- the other tenant tables, so a grant added later still sees one tenant only.
ALTER TABLE teams_graph_subscriptions ENABLE ROW LEVEL SECURITY;
CREATE POLICY teams_graph_subscriptions_of_current_tenant ON teams_graph_subscriptions
    FOR SELECT TO runbook_reader
    USING (tenant_id = current_setting('runbook.tenant_id', true));
