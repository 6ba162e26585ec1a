"""The gate before any model call: a calibrated estimate, from the retrieved evidence alone, that
the tenant's runbooks answer the question; below its threshold the answer abstains.

May import: the shared modules and every stage before it up to ``rag.retrieval``.
"""
