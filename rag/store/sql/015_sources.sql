-- Runbook sources (issue 25): each tenant's git repositories and Confluence spaces, synced by
-- `runbook source sync` and by `runbook serve` (schedule and push webhooks).

CREATE TABLE sources (
    source_id   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id   text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    name        text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('git', 'confluence')),
    -- What the kind reads (url, branch, path | base_url, space, label, email): no secrets.
    settings    jsonb NOT NULL DEFAULT '{}',
    -- A token or deploy key, always {"sealed": …} (bot/core/token_cipher.py); NULL: none.
    credential  jsonb,
    -- Verifies push webhooks; sealed when RUNBOOK_ENCRYPTION_KEYS is set.
    webhook_secret jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- The last sync: when it ended, 'synced' or 'failed', its counts and skipped paths with
    -- reasons, its error (failed), and the version it published (a commit, for git).
    last_sync_at  timestamptz,
    last_outcome  text CHECK (last_outcome IN ('synced', 'failed')),
    last_report   jsonb,
    last_error    text,
    last_version  text,
    -- Failed syncs in a row; the tenant's default owner hears of it once, at the third.
    consecutive_failures integer NOT NULL DEFAULT 0,
    failure_reported_at  timestamptz,
    UNIQUE (tenant_id, name)
);

-- What a source held at its last sync: one row per item (a file path, a page id) with the
-- version published (a blob id, a page version) and the document it became, or why it was
-- skipped. A sync reads only the items whose version changed, and retires the documents of
-- the items that are gone.
CREATE TABLE source_items (
    source_id   uuid NOT NULL REFERENCES sources ON DELETE CASCADE,
    item_id     text NOT NULL,
    version     text NOT NULL,
    document_id text,
    skipped     text,
    PRIMARY KEY (source_id, item_id),
    CHECK ((document_id IS NULL) <> (skipped IS NULL))
);
CREATE INDEX source_items_document ON source_items (document_id) WHERE document_id IS NOT NULL;

-- A synced document's age comes from its source (the file's last commit, the page's version
-- time) unless its frontmatter says otherwise.
ALTER TABLE documents DROP CONSTRAINT IF EXISTS documents_updated_source_check;
ALTER TABLE documents ADD CONSTRAINT documents_updated_source_check
    CHECK (updated_source IN ('frontmatter', 'git', 'mtime', 'confluence'));

-- Retrieval's role never reads these: only the owner (CLI, sync, webhooks) does. Row-level
-- security as on the other tenant tables, so a grant added later still sees one tenant only.
ALTER TABLE sources ENABLE ROW LEVEL SECURITY;
ALTER TABLE source_items ENABLE ROW LEVEL SECURITY;
CREATE POLICY sources_of_current_tenant ON sources FOR SELECT TO runbook_reader
    USING (tenant_id = current_setting('runbook.tenant_id', true));
CREATE POLICY source_items_of_current_tenant ON source_items FOR SELECT TO runbook_reader
    USING (source_id IN (SELECT source_id FROM sources
                         WHERE tenant_id = current_setting('runbook.tenant_id', true)));
