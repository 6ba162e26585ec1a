"""Text into vectors: the default model's files (from pip-installed wheels, checked), the fastembed
embedder off the event loop, length-sorted batches under a token budget, and the model's own
vocabulary of ordinary words.

May import: the shared modules and ``rag.store``.
"""
