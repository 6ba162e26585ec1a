"""Answers as every surface shows them: stored by reference behind the buttons (with feedback),
their text-free facts, citations grouped by number, the outcome wording, sections and topics.
"""
