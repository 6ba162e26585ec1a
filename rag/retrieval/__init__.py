"""Finding the evidence: question and passage terms (abbreviations, compounds), alert posts as
queries, hybrid search inside one tenant (pgvector + BM25 in one SQL query), the learned ranker
and its features, and the ranked ``Evidence`` every later stage reads.

May import: the shared modules, ``rag.store``, ``rag.embedding``, ``rag.formats`` and
``rag.ingest``.
"""
