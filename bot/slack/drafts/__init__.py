"""Slack entry points of thread-to-runbook drafts (issue 40): shortcut, modal, delivery job."""
