"""Commands in a message: fenced code blocks and inline code spans, in the order written."""

from __future__ import annotations

import re

# A fenced block (``` or ~~~, a language tag allowed) or an inline span.
_CODE = re.compile(r"(`{3,}|~{3,})[^\n`]*\n?(?P<block>.*?)\1|`(?P<span>[^`\n]+)`", re.S)
# An inline span is a command when it reads like one: a program name, then arguments.
_COMMAND_SPAN = re.compile(r"^(?:sudo\s+|[A-Z_]+=\S+\s+)*[a-z][\w.+-]*(?:\s+\S+)+$")
# Changes something without being one of rag's state-changing patterns (those are marked ⚠️
# separately): used to tell the fix from the diagnosis around it.
_ACTS = re.compile(
    r"\b(?:alter|apply|patch|scale|restart|rollout|delete|set|edit|update|upgrade|"
    r"add-config|delete-config|drain|cordon|uncordon|failover|switchover|promote|reload|kill|"
    r"truncate|purge|vacuum|resize|expand|increase|rollback|revert|reindex|flush|evict|"
    r"reassign|rebalance|start|stop|enable|disable|INSERT|UPDATE|ALTER|DELETE|DROP)\b",
)


def commands_in(text: str) -> list[str]:
    """Every command in ``text``: whole fenced blocks (trimmed), and inline spans that look
    like a command line (``kubectl get pods``, not ``clickstream-raw``)."""
    found: list[str] = []
    for match in _CODE.finditer(text):
        block, span = match.group("block"), match.group("span")
        if block is not None and block.strip():
            found.append(block.strip("\n").rstrip())
        elif span is not None and _COMMAND_SPAN.match(span.strip()):
            found.append(span.strip())
    return found


def prose_of(text: str) -> str:
    """``text`` without its commands (blocks and command spans): what was said around them."""
    prose = _CODE.sub(_keep_words, text)
    return " ".join(prose.split()).rstrip(": ")


def _keep_words(match: re.Match[str]) -> str:
    span = match.group("span")
    if span is not None and not _COMMAND_SPAN.match(span.strip()):
        return match.group(0)
    return " "


def acts(command: str) -> bool:
    """Whether the command changes something (a fix), as opposed to only reading."""
    return _ACTS.search(command) is not None
