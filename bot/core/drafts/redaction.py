"""Secrets a responder pasted into a thread, replaced before anything is drafted from it.

Tokens by their issuers' prefixes (Slack ``xox?-``, GitHub ``ghp_``/``github_pat_``, GitLab
``glpat-``, AWS ``AKIA…``), private key blocks, passwords in URLs and connection strings,
``Authorization`` headers, and ``password=``/``--password`` style assignments. The pattern errs
towards redacting: a draft is reviewed by a person, who can put back a harmless value, while a
leaked key stays in git history for good.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REDACTED = "[redacted]"

# Whole matches replaced by the marker.
_WHOLE = (
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
        re.S,
    ),
    re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{8,}"),
    re.compile(r"\bxapp-[A-Za-z0-9-]{8,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{16,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+"),
)
# The secret is group "secret"; what names it stays, so the reader sees what was there.
_NAMED = (
    # scheme://user:password@host (URLs, postgres://, redis://, amqp:// …)
    re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@", re.I),
    re.compile(r"\bAuthorization\s*:\s*(?:Bearer|Basic|token)\s+(?P<secret>[^\s'\"]+)", re.I),
    re.compile(r"\b(?:Bearer)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    re.compile(
        r"(?<![\w-])--?(?:password|passwd|pass|token|secret|api-key|apikey)(?:=|\s+)"
        r"(?P<secret>[^\s'\"]+|'[^']*'|\"[^\"]*\")",
        re.I,
    ),
    re.compile(
        r"\b(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key"
        r"|aws_secret_access_key|client[_-]?secret)\b[\"']?\s*[:=]\s*"
        r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s,;'\"]+)",
        re.I,
    ),
    # PGPASSWORD=… MYSQL_PWD=… in an environment prefix
    re.compile(r"\b[A-Z_]*(?:PASSWORD|PASSWD|_PWD|_TOKEN|_SECRET)=(?P<secret>\S+)"),
)


@dataclass(frozen=True)
class Redacted:
    """A text with its secrets replaced, and how many were."""

    text: str
    count: int


def redact(text: str) -> Redacted:
    """``text`` with every secret it holds replaced by ``[redacted]``."""
    count = 0

    def whole(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return REDACTED

    def named(match: re.Match[str]) -> str:
        nonlocal count
        if match.group("secret") == REDACTED or REDACTED in match.group("secret"):
            return match.group(0)
        count += 1
        start, end = match.span("secret")
        base = match.start()
        found = match.group(0)
        return found[: start - base] + REDACTED + found[end - base :]

    for pattern in _WHOLE:
        text = pattern.sub(whole, text)
    for pattern in _NAMED:
        text = pattern.sub(named, text)
    return Redacted(text, count)
