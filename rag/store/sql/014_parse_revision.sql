-- Which parser cut a document's chunks (rag.markdown.PARSE_REVISION). Revision 2 puts the title
-- at the root of the heading path of a runbook that has no level-1 heading (a Hugo page with a
-- front-matter title and `##` sections), as an H1 would be; the ranker reads a path's first
-- entry as the runbook's name and the rest as its sections. The embedded text, the lexemes and
-- the chunk boundaries are the same under both, so ingestion updates the heading paths of an
-- older document in place (rag/ingest_relabel.py) instead of embedding it again.
ALTER TABLE documents ADD COLUMN parse_revision smallint NOT NULL DEFAULT 1;
