-- A second tenant boundary behind the WHERE clause: retrieval runs as runbook_reader, a role
-- that does not own these tables, so the policies apply to it (owners and superusers bypass
-- RLS). Each retrieval transaction sets runbook.tenant_id; with it unset, no row is visible.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'runbook_reader') THEN
        CREATE ROLE runbook_reader NOLOGIN;
    END IF;
END
$$;
GRANT runbook_reader TO CURRENT_USER;
GRANT USAGE ON SCHEMA public TO runbook_reader;
GRANT SELECT ON documents, chunks TO runbook_reader;

ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;

CREATE POLICY documents_of_current_tenant ON documents FOR SELECT TO runbook_reader
    USING (tenant_id = current_setting('runbook.tenant_id', true));
CREATE POLICY chunks_of_current_tenant ON chunks FOR SELECT TO runbook_reader
    USING (tenant_id = current_setting('runbook.tenant_id', true));
