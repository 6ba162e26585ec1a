"""The channel-neutral bot core: conversation flow, dedupe, answer store, tasks and metrics.

Nothing here imports a chat platform's SDK; each surface (``bot.slack``, ``bot.teams``) renders
and delivers what this core produces.
"""
