-- The gap report groups unanswered questions by meaning (bot/core/gap_clusters.py): each answer
-- fact keeps the question's embedding, made when it was asked, and the similarity of each runbook
-- it points at. Vectors are not text: they stay after RUNBOOK_RETAIN_TEXT_DAYS with the fact.
-- No dimension on the column: facts outlive a change of embedding model, and the report compares
-- only vectors of the same `embedding_model`.
ALTER TABLE answer_facts
    ADD COLUMN question_embedding vector,
    ADD COLUMN embedding_model text,
    -- cosine of the question to the best chunk of each of `documents`, same order
    ADD COLUMN cosines real[] NOT NULL DEFAULT '{}';
