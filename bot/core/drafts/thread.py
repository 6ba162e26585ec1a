"""An incident thread as every surface reads it: its messages in posting order, each with who
posted it and a link back to it. Slack (``conversations.replies``) and Teams (Graph replies)
each turn their own shapes into these."""

from __future__ import annotations

from dataclasses import dataclass

# "Write the runbook" is offered on an abstention or a 👎'd answer once the thread has this many
# replies from people: by then it holds what responders checked and did.
OFFER_AFTER_HUMAN_REPLIES = 3


@dataclass(frozen=True)
class ThreadMessage:
    """One message: ``text`` keeps code as Markdown (inline spans and fenced blocks)."""

    message_id: str
    author_id: str
    author: str
    text: str
    link: str
    from_bot: bool = False


@dataclass(frozen=True)
class IncidentThread:
    """A whole thread: the first message is its root (often the alert post)."""

    surface: str  # "slack" | "teams"
    team_id: str
    channel_id: str
    channel_name: str
    thread_id: str
    link: str
    messages: tuple[ThreadMessage, ...]

    @property
    def human_replies(self) -> int:
        """Replies from people (the root and bots' posts do not count)."""
        return sum(1 for m in self.messages[1:] if not m.from_bot)
