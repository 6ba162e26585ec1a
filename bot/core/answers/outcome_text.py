"""What every surface says when a question got no answer: one wording per reason or error code;
and how an answer labels the runbook owner it names as who to contact.

Fixed text per code on purpose: exception text can carry provider bodies, paths or internals,
and a responder should read the same sentence in Slack and in Teams.
"""

from __future__ import annotations

ABSTENTION_REASONS = {
    "no_evidence": "No runbook matched this question.",
    "low_confidence": "Some runbooks matched loosely, but none closely enough to answer from.",
    "not_in_sources": "The closest runbook sections were read, but they don't answer this.",
    "unverifiable_citations": (
        "An answer was drafted, but its quotes could not be verified word for word against "
        "the runbooks, so it was withheld."
    ),
}
UNKNOWN_ABSTENTION = "No runbook passage qualified as evidence for an answer."

ERROR_MESSAGES = {
    "answer_provider_timeout": "The answer service did not reply in time.",
    "answer_provider_unavailable": "The answer service could not be reached.",
    "answer_provider_rate_limited": "The answer service is busy (rate limited).",
    "answer_provider_authentication_failed": (
        "The answer service rejected runbook-bot's credentials; an admin needs to fix its API key."
    ),
    "answer_provider_request_rejected": "The answer service rejected the request.",
    "answer_provider_invalid_response": "The answer service sent a reply that could not be read.",
    "answer_provider_empty_response": "The answer service sent an empty reply.",
    "answer_provider_ungrounded_response": (
        "The answer service replied without citing any runbook, so its reply was withheld."
    ),
    "embedding_failed": "The question could not be prepared for search.",
    "embedding_model_files_invalid": (
        "runbook-bot's search model files are missing or damaged; an admin needs to reinstall them."
    ),
    "embedding_model_mismatch": (
        "These runbooks were indexed with a different search model; an admin needs to ingest "
        "them again."
    ),
    "store_unavailable": "The runbook database is unavailable.",
    "configuration_invalid": "runbook-bot is misconfigured; an admin needs to check its settings.",
}
UNKNOWN_ERROR = "Something went wrong while answering."

# The owner field of a who-do-I-page answer whose runbook names no one: whose name it is, and
# that it comes from the runbook's metadata (front matter, CODEOWNERS, the Confluence author).
OWNER_LABEL = "Runbook owner"
OWNER_NOTE = "from the runbook's metadata, not its text"
