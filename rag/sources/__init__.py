"""Runbook sources kept in sync: a git branch (``git/``) or a Confluence space (``confluence/``),
each read through the ``SourceReader`` seam, the ``sources`` table, and one sync that compares,
reads what changed and publishes it through ingest's write path, all at once.

May import: the shared modules, ``rag.store``, ``rag.embedding``, ``rag.formats`` and
``rag.ingest``.
"""
