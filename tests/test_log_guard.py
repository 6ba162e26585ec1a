from __future__ import annotations

import logging

from tests import credentials
from tests.log_guard import LogGuard


def test_log_guard_flags_secrets_at_any_level_and_question_text_at_info() -> None:
    guard = LogGuard()
    guard.forbid_secret(credentials.SLACK_BOT_TOKEN)
    guard.forbid_text("how do I fail over the primary database?")
    logger = logging.getLogger("guard-selftest")
    logger.propagate = False
    logger.addHandler(guard)
    logger.setLevel(logging.DEBUG)
    try:
        logger.debug("token %s", credentials.SLACK_BOT_TOKEN)
        logger.debug("question: how do I fail over the primary database?")
        logger.info("question: how do I fail over the primary database?")
        logger.info("ask finished in %d ms", 12)
    finally:
        logger.removeHandler(guard)
    assert len(guard.take()) == 2
