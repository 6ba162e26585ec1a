"""Commands in a message: fenced code blocks and inline code spans, in the order written."""

from __future__ import annotations

import re

# A fenced block (``` or ~~~, a language tag allowed) or an inline span.
_CODE = re.compile(r"(`{3,}|~{3,})[^\n`]*\n?(?P<block>.*?)\1|`(?P<span>[^`\n]+)`", re.S)
# An inline span is a command when it reads like one: a program name, then arguments.
_COMMAND_SPAN = re.compile(r"^(?:sudo\s+|[A-Z_]+=\S+\s+)*[a-z][\w.+-]*(?:\s+\S+)+$")
_TRAILING_SPAN = re.compile(r"`([^`\n]+)`\s*$")
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
    """``text`` without its fenced blocks and a command it ends with: what was said around
    them (inline code inside a sentence stays: "`df -h` says 93% used")."""
    prose = _CODE.sub(lambda m: " " if m.group("block") is not None else m.group(0), text)
    prose = " ".join(prose.split())
    trailing = _TRAILING_SPAN.search(prose)
    if trailing and _COMMAND_SPAN.match(trailing.group(1).strip()):
        prose = prose[: trailing.start()]  # the step shows the command below
    return prose.rstrip(": ")


def acts(command: str) -> bool:
    """Whether the command changes something (a fix), as opposed to only reading."""
    return _ACTS.search(command) is not None
