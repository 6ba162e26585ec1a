"""Self-service administration, shared by Slack and Teams: who may change a tenant's settings,
the audit log of every change, the changes themselves, and a tenant's install lifecycle."""
