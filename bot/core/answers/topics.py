"""What a question is about, as short labels that survive text retention.

Computed when an answer or abstention is stored: alert names (``KubePodCrashLooping``), the
tenant's services named in the question (or the channel's service), and plain terms. The gap
report groups unanswered questions by meaning (their stored embeddings) and names each group
with these labels (``bot/core/gaps/labels.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

ALERT, SERVICE, TERM = "alert", "service", "term"
MAX_TERMS = 8

# Two or more capitalised humps: alert rule names. "PostgreSQL" or "Kafka" are not one.
_ALERT_NAME = re.compile(r"\b(?:[A-Z][a-z0-9]+){2,}[A-Za-z0-9]*\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{2,}")
# Function words, and the words every incident question shares (they tell topics apart poorly).
_STOPWORDS = frozenset(
    """about after again all also and any are because been before being but can could did does
    doing down during each for from had has have how into its just keep keeps more most much
    not now off once only other our out over own same should some such than that the their
    them then there these they this those through too under until very was were what when
    where which while who whom why will with would you your yours please tell know need want
    get got getting make happen happens happening help check first fix fixing fixed do
    issue issues problem problems error errors wrong broken failing fails failed still
    anyone someone something thing things way see seeing look looking runbook runbooks
    today yesterday again going use using used""".split()
)


def question_topics(
    question: str, *, known_services: Iterable[str], service: str | None = None
) -> tuple[str, ...]:
    """Labels such as ``alert:KubePodCrashLooping``, ``service:payments``, ``term:certificate``."""
    topics: dict[str, None] = {}
    alerts = _ALERT_NAME.findall(question)
    for name in alerts:
        topics[f"{ALERT}:{name}"] = None
    lowered = question.lower()
    services = [s for s in known_services if _names(lowered, s.lower())]
    for name in sorted(services, key=str.lower):
        topics[f"{SERVICE}:{name}"] = None
    if service:
        topics[f"{SERVICE}:{service}"] = None
    covered = {a.lower() for a in alerts} | {s.lower() for s in services}
    covered |= {part for s in services for part in _parts(s)}
    terms = 0
    for word in _WORD.findall(question):
        term = normalise_term(word)
        if term in _STOPWORDS or term in covered or f"{TERM}:{term}" in topics:
            continue
        topics[f"{TERM}:{term}"] = None
        terms += 1
        if terms == MAX_TERMS:
            break
    return tuple(topics)


def normalise_term(word: str) -> str:
    """Lower case, simple plurals folded ("certificates" and "certificate" meet)."""
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 4:
        return word[:-1]
    return word


def topic_kind(topic: str) -> str:
    return topic.partition(":")[0]


def topic_label(topic: str) -> str:
    return topic.partition(":")[2]


def _names(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _parts(service: str) -> set[str]:
    return {part for part in re.split(r"[^a-z0-9]+", service.lower()) if part}
