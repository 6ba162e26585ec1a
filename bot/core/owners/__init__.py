"""The owners' loop: who owns a runbook inside a tenant, the reason behind a 👎, and the durable
queue of notes sent to owners at most once per runbook per window.
"""
