-- Storage (issue 15): `tsv` keeps lexemes only. Retrieval's BM25 counts a term once per chunk
-- (binary term frequency) and never reads positions, yet positions were 38 % of `tsv` (159 of
-- 421 bytes a chunk on the synthetic corpus) and kept rows just above the size that packs five
-- to an 8 kB page. The one thing positions carried that retrieval uses is their weight: which
-- lexemes the title (A) or a heading (B) holds, for the heading bonus. Those move to
-- `heading_tsv`, itself without positions (about 65 bytes). Lexemes and `length(tsv)` do not
-- change, so term statistics and BM25 stay exactly as they were.
ALTER TABLE chunks ADD COLUMN heading_tsv tsvector;

-- The rewrite changes no lexeme: the statistics triggers would subtract and add back every row.
ALTER TABLE chunks DISABLE TRIGGER chunks_term_stats_update;
UPDATE chunks SET heading_tsv = strip(ts_filter(tsv, '{a,b}')), tsv = strip(tsv);
ALTER TABLE chunks ENABLE TRIGGER chunks_term_stats_update;

ALTER TABLE chunks ALTER COLUMN heading_tsv SET NOT NULL;
