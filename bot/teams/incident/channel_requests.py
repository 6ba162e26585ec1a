"""Channel messages that reached the bot without a mention (resource-specific consent), as queue
jobs: an alert post (``teams.alert_post``) and a follow-up question in a thread
(``teams.follow_up``). Plain JSON, so any replica serving Teams can answer them; a replica
without Teams leaves them queued (``next_job`` hands out only the kinds a worker serves)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from microsoft_agents.activity import ConversationReference

from bot.teams.jobs.requests import reference_from, reference_json

ALERT_POST = "teams.alert_post"
FOLLOW_UP = "teams.follow_up"


@dataclass(frozen=True)
class ChannelPostRequest:
    """A post in a channel thread. ``reference``: the thread (``…;messageid=ROOT``, its
    ``activity_id`` the root) where any answer goes; ``text``: an alert post's words, one line
    each, or a follow-up's question; ``thread_root``: the thread's root message id."""

    reference: ConversationReference
    aad_tenant: str | None
    channel_id: str
    thread_root: str
    text: str
    hints: tuple[str, ...] = ()  # an alert post's scope hints, most specific first

    def payload(self) -> dict[str, Any]:
        return {
            "reference": reference_json(self.reference),
            "aad_tenant": self.aad_tenant,
            "channel_id": self.channel_id,
            "thread_root": self.thread_root,
            "text": self.text,
            "hints": list(self.hints),
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> ChannelPostRequest:
        aad = payload.get("aad_tenant")
        return cls(
            reference=reference_from(payload),
            aad_tenant=aad if isinstance(aad, str) and aad else None,
            channel_id=str(payload["channel_id"]),
            thread_root=str(payload["thread_root"]),
            text=str(payload.get("text") or ""),
            hints=tuple(str(hint) for hint in payload.get("hints") or ()),
        )
