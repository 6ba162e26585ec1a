"""runbook-bot's Slack app: Bolt listeners, tenancy, intake dedupe, OAuth stores, the server."""
