"""One listener module per Slack entry point: mentions, ``/runbook``, the message shortcut, DMs,
thread follow-ups, alert posts, and the buttons and modals on the bot's cards.
"""
