-- Microsoft Teams: which AAD tenants (organisations) may use the bot, and where a Teams answer
-- card lives so a button can update it. Channel scopes reuse channel_scopes with the AAD tenant
-- id in team_id (a GUID never collides with a Slack team id).

-- The allow-list: an AAD tenant that is not here gets a "not connected" card and no search.
CREATE TABLE teams_tenants (
    aad_tenant_id text PRIMARY KEY CHECK (aad_tenant_id ~ '^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$'),
    tenant_id     text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX teams_tenants_tenant ON teams_tenants (tenant_id);

-- A Teams answer's placement: the conversation (a channel thread is '…;messageid=ROOT'), the
-- Bot Connector that serves it, and the activity it answered. NULL for Slack answers.
ALTER TABLE answers
    ADD COLUMN conversation_id text,
    ADD COLUMN service_url     text,
    ADD COLUMN activity_id     text;
