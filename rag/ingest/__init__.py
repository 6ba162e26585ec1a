"""Runbooks into the store: finding and reading runbook files safely, scanning a tenant against
what is stored, chunking parsed sections, embedding what changed, and writing versions and
retirements in one transaction; also each runbook's age and the prune guard.

May import: the shared modules, ``rag.store``, ``rag.embedding`` and ``rag.formats``.
"""
