"""The Slack surface: Bolt app, one listener module per entry point, OAuth stores, Block Kit."""
