"""The Teams message action "Draft a runbook from this thread" (issue 40): the thread read
through Graph replies, drafted by ``bot.core.drafts``, reviewed in a dialog, delivered by a job."""
