"""A Slack thread as an ``IncidentThread``: ``conversations.replies`` (every page), authors'
names from ``users.info``, message links built from the workspace's URL (``auth.test``)."""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.drafts.thread import IncidentThread, ThreadMessage
from bot.slack.alerts import read_message

_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")
_USER = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#[A-Z0-9]+\|?([^>]*)>")
_MAX_PAGES = 20
_MAX_NAMES = 40


async def read_thread(
    client: AsyncWebClient, *, team_id: str, channel: str, thread_ts: str
) -> IncidentThread:
    messages: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        reply = await client.conversations_replies(
            channel=channel, ts=thread_ts, limit=200, cursor=cursor
        )
        messages += [m for m in reply.get("messages") or [] if isinstance(m, dict)]
        cursor = (reply.get("response_metadata") or {}).get("next_cursor") or None
        if not cursor:
            break
    # Concurrently: the modal must open within the trigger's three seconds.
    users = {str(m.get("user")) for m in messages if m.get("user")}
    base, names, channel_name = await asyncio.gather(
        _workspace_url(client), _names(client, users), _channel_name(client, channel)
    )
    read = []
    for message in messages:
        ts = str(message.get("ts") or "")
        from_bot = bool(message.get("bot_id")) or message.get("subtype") == "bot_message"
        text = read_message(message).question if from_bot else str(message.get("text") or "")
        user = str(message.get("user") or message.get("bot_id") or "")
        author = names.get(user) or str((message.get("bot_profile") or {}).get("name") or user)
        read.append(
            ThreadMessage(
                message_id=ts,
                author_id=user,
                author=author,
                text=_plain(text, names),
                link=_permalink(base, channel, ts, thread_ts),
                from_bot=from_bot,
            )
        )
    return IncidentThread(
        surface="slack",
        team_id=team_id,
        channel_id=channel,
        channel_name=channel_name,
        thread_id=thread_ts,
        link=_permalink(base, channel, thread_ts, thread_ts),
        messages=tuple(read),
    )


def _permalink(base: str, channel: str, ts: str, thread_ts: str) -> str:
    link = f"{base}archives/{channel}/p{ts.replace('.', '')}"
    return link if ts == thread_ts else f"{link}?thread_ts={thread_ts}&cid={channel}"


def _plain(text: str, names: dict[str, str]) -> str:
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _USER.sub(lambda m: "@" + names.get(m.group(1), m.group(1)), text)
    text = _CHANNEL.sub(lambda m: "#" + m.group(1), text)
    return html.unescape(text)


async def _workspace_url(client: AsyncWebClient) -> str:
    try:
        url = str((await client.auth_test()).get("url") or "https://slack.com/")
    except SlackApiError:
        url = "https://slack.com/"
    return url if url.endswith("/") else url + "/"


async def _names(client: AsyncWebClient, users: set[str]) -> dict[str, str]:
    """Each author's display name (at most ``_MAX_NAMES`` looked up; the rest keep their id)."""
    ordered = sorted(users)[:_MAX_NAMES]
    found = await asyncio.gather(*(_name(client, user) for user in ordered))
    return {user: name for user, name in zip(ordered, found, strict=True) if name}


async def _name(client: AsyncWebClient, user: str) -> str | None:
    try:
        info = (await client.users_info(user=user)).get("user") or {}
    except SlackApiError:
        return None
    profile = info.get("profile") or {}
    name = profile.get("display_name") or info.get("real_name") or info.get("name")
    return str(name) if name else None


async def _channel_name(client: AsyncWebClient, channel: str) -> str:
    try:
        info = (await client.conversations_info(channel=channel)).get("channel") or {}
    except SlackApiError:
        return channel
    return str(info.get("name") or channel)
