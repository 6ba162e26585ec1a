"""The gap report: unanswered questions grouped by meaning, their labels and owners, 👎 by runbook,
stale runbooks that matter, a draft skeleton per gap, as text, JSON and a self-contained HTML page.
"""
