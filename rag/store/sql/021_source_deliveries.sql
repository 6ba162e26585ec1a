-- Signed source webhooks already answered (issue 36): a push webhook signed once can be sent
-- again by anyone who saw it (GitHub's signature covers the body, not a time), so each body
-- verified for a source is kept for 30 days, longer than the jobs it queued. The key is the
-- SHA-256 of the body (the delivery id headers are not signed); a replay is answered 200
-- "duplicate" and queues nothing.
CREATE TABLE source_deliveries (
    source_id   uuid NOT NULL REFERENCES sources ON DELETE CASCADE,
    body_sha256 text NOT NULL,
    delivery_id text,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_id, body_sha256)
);
CREATE INDEX source_deliveries_age ON source_deliveries (received_at);

ALTER TABLE source_deliveries ENABLE ROW LEVEL SECURITY;
CREATE POLICY source_deliveries_of_current_tenant ON source_deliveries FOR SELECT
    TO runbook_reader
    USING (source_id IN (SELECT source_id FROM sources
                         WHERE tenant_id = current_setting('runbook.tenant_id', true)));
