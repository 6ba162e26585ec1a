"""A Teams channel thread as an ``IncidentThread``: the root message and its replies read
through Microsoft Graph (``GET …/messages/{id}`` and ``…/replies``, every page). Message HTML
becomes text with its code kept as Markdown (``<code>`` spans, ``<pre>`` blocks); a card post
(an alert from Workflows) is read as the alert it announces."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from bot.core.drafts.thread import IncidentThread, ThreadMessage
from bot.teams.alerts import read_message_payload
from bot.teams.graph.client import GraphClient

_BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "ul", "ol"})


async def read_teams_thread(
    graph: GraphClient, aad_tenant: str, team_id: str, channel_id: str, root_id: str
) -> IncidentThread | None:
    """The whole thread, oldest first; None when its root is gone."""
    root = await graph.channel_message(aad_tenant, team_id, channel_id, root_id)
    if root is None:
        return None
    replies = await graph.channel_replies(aad_tenant, team_id, channel_id, root_id)
    replies.sort(key=lambda m: str(m.get("createdDateTime") or ""))
    messages = [m for m in [root, *replies] if not m.get("deletedDateTime")]
    link = str(root.get("webUrl") or "")
    return IncidentThread(
        surface="teams",
        team_id=team_id,
        channel_id=channel_id,
        channel_name=str((root.get("channelIdentity") or {}).get("channelId") or channel_id),
        thread_id=root_id,
        link=link,
        messages=tuple(_message(m, link) for m in messages),
    )


def _message(message: dict[str, Any], thread_link: str) -> ThreadMessage:
    sender = message.get("from") or {}
    user = sender.get("user") if isinstance(sender.get("user"), dict) else None
    app = sender.get("application") if isinstance(sender.get("application"), dict) else None
    who = user or app or {}
    body = message.get("body") or {}
    content = str(body.get("content") or "")
    if app is not None:  # an app's post: the alert its card carries
        text = read_message_payload(message).question
    elif body.get("contentType") == "html":
        text = html_to_markdown(content)
    else:
        text = content
    return ThreadMessage(
        message_id=str(message.get("id") or ""),
        author_id=str(who.get("id") or ""),
        author=str(who.get("displayName") or who.get("id") or "someone"),
        text=text,
        link=str(message.get("webUrl") or thread_link),
        from_bot=app is not None,
    )


def html_to_markdown(html: str) -> str:
    """Teams message HTML as plain lines with ``code`` spans and fenced ``pre`` blocks."""
    reader = _Markdown()
    reader.feed(html)
    reader.close()
    return reader.text()


class _Markdown(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._parts: list[str] = []
        self._skip = 0
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("at", "attachment", "script", "style"):
            self._skip += 1
        elif tag == "pre":
            self._pre += 1
            self._parts.append("\n```\n")
        elif tag == "code" and not self._pre:
            self._parts.append("`")
        elif tag in _BLOCKS:
            self._parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("at", "attachment", "script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            self._parts.append("\n```\n")
        elif tag == "code" and not self._pre:
            self._parts.append("`")
        elif tag in _BLOCKS and not self._pre:
            self._parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._parts.append(data)

    def text(self) -> str:
        lines = "".join(self._parts).splitlines()
        kept: list[str] = []
        fenced = False
        for line in lines:
            if line.strip() == "```":
                fenced = not fenced
                kept.append("```")
            elif fenced:
                kept.append(line.rstrip())
            elif " ".join(line.split()):
                kept.append(" ".join(line.split()))
        return "\n".join(kept)
