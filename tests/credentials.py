"""Fake credentials the suite hands to the code under test; the log guard forbids each one."""

from __future__ import annotations

ANTHROPIC_API_KEY = "sk-ant-api03-NEVER-SHOW-THIS-KEY-0123456789"
SLACK_BOT_TOKEN = "xoxb-test-bot-token-000000000000"
SLACK_APP_TOKEN = "xapp-test-app-token-000000000000"
SLACK_SIGNING_SECRET = "test-signing-secret-8f3a9c"
SLACK_CLIENT_SECRET = "test-client-secret-55aa"
TEAMS_APP_PASSWORD = "test-teams-password-0000"
GIT_TOKEN = "ghp_test-git-token-NEVER-LOGGED-0000"

ALL = (
    ANTHROPIC_API_KEY,
    SLACK_BOT_TOKEN,
    SLACK_APP_TOKEN,
    SLACK_SIGNING_SECRET,
    SLACK_CLIENT_SECRET,
    TEAMS_APP_PASSWORD,
    GIT_TOKEN,
)
