-- Self-service (issue 39): a workspace or organisation that installs the app is its own tenant,
-- its admins change its settings from Slack's App Home or Teams' personal chat, and every change
-- is recorded. Tables hold ids and setting values, never a credential.

-- How a tenant came to be and whether it is installed: an uninstalled tenant keeps its data
-- until delete_after (RUNBOOK_UNINSTALL_RETENTION_DAYS), then upkeep deletes it.
CREATE TABLE tenant_installs (
    tenant_id      text PRIMARY KEY REFERENCES tenants ON DELETE CASCADE,
    surface        text NOT NULL CHECK (surface IN ('slack', 'teams')),
    -- The Slack team (or enterprise for an org-wide install) or the AAD tenant.
    install_key    text NOT NULL,
    display_name   text NOT NULL DEFAULT '',
    installed_by   text NOT NULL DEFAULT '',
    installed_at   timestamptz NOT NULL DEFAULT now(),
    uninstalled_at timestamptz,
    delete_after   timestamptz,
    UNIQUE (surface, install_key)
);
CREATE INDEX tenant_installs_due ON tenant_installs (delete_after) WHERE delete_after IS NOT NULL;

-- People (U…, a Teams AAD object id) and Slack user groups (S…) who may change settings,
-- besides a Slack workspace's own admins and owners.
CREATE TABLE tenant_admins (
    tenant_id text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    surface   text NOT NULL CHECK (surface IN ('slack', 'teams')),
    principal text NOT NULL,
    kind      text NOT NULL CHECK (kind IN ('user', 'usergroup')),
    added_by  text NOT NULL,
    added_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, surface, principal)
);

-- Every settings change: who, what, when, before -> after (values only, never a secret).
CREATE TABLE settings_audit (
    tenant_id text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    audit_id  bigint GENERATED ALWAYS AS IDENTITY,
    at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor     text NOT NULL,
    surface   text NOT NULL,
    action    text NOT NULL,
    target    text NOT NULL DEFAULT '',
    before    jsonb,
    after     jsonb,
    PRIMARY KEY (tenant_id, audit_id)
);
CREATE INDEX settings_audit_recent ON settings_audit (tenant_id, at DESC);

-- A settings form submitted once: a double-submitted modal adds one source, not two.
CREATE TABLE settings_submissions (
    submission_key text PRIMARY KEY,
    tenant_id      text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    at             timestamptz NOT NULL DEFAULT now()
);
