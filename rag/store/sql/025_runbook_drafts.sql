-- Runbook drafts (issue 40): an incident thread drafted into a runbook, reviewed in a modal and
-- delivered as a pull / merge request, a Confluence draft page, or a file in the thread.

CREATE TABLE runbook_drafts (
    tenant_id   text NOT NULL REFERENCES tenants ON DELETE CASCADE,
    -- Deterministic from the thread (surface, team, channel, thread): a second draft of one
    -- thread, a double-submitted modal and every retry land on the same branch and PR.
    draft_id    text NOT NULL,
    surface     text NOT NULL CHECK (surface IN ('slack', 'teams')),
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    thread_id   text NOT NULL,
    thread_link text NOT NULL,
    -- The redacted draft as shown in the modal (title, Markdown), until it is submitted.
    title       text NOT NULL,
    markdown    text NOT NULL,
    redactions  integer NOT NULL DEFAULT 0,
    -- The bot's answers in the thread: the gap report links their gap to this draft.
    answer_ids  text[] NOT NULL DEFAULT '{}',
    drafted_by  text NOT NULL,
    submitted_by text,
    -- 'drafted' (modal shown), 'submitted' (delivery queued), 'open' (PR / page / file
    -- delivered), 'failed' (permanently; error says why).
    state       text NOT NULL DEFAULT 'drafted'
        CHECK (state IN ('drafted', 'submitted', 'open', 'failed')),
    destination jsonb,
    link        text,
    document_id text,
    error       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, draft_id)
);

ALTER TABLE runbook_drafts ENABLE ROW LEVEL SECURITY;
CREATE POLICY runbook_drafts_of_current_tenant ON runbook_drafts FOR SELECT TO runbook_reader
    USING (tenant_id = current_setting('runbook.tenant_id', true));
