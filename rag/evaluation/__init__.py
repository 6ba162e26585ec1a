"""Measuring the pipeline: golden sets through retrieval and the gate (``runbook eval``), the
public evaluation over the six collections, and the fits of the gate and the ranker.

May import: anything in ``rag`` below the entry points (it drives ``rag.service``).
"""
