"""Answering from evidence: the answerers (extractive by default, Claude when configured), claims
and their citation markers, verification of every quote against the chunk it names, citation
numbers in reading order, state-changing commands, and the cited runbook as a card shows it.

May import: the shared modules and every stage before it up to ``rag.gate``.
"""
