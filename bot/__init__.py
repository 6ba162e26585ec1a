"""runbook-bot's chat surfaces: the channel-neutral core (``bot.core``), one package per surface
(``bot.slack``, ``bot.teams``), the shared HTTP server and the ``runbook`` command line."""
