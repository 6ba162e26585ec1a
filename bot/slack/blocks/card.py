"""``Card``, the rendered message, and the whole-message limits every card is built within."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import Block, ButtonElement

from bot.slack.blocks.text import clip, units
from rag import AskResult

MAX_BLOCKS = 50
BUTTON_TEXT_MAX = 75
BUTTON_VALUE_MAX = 2000
# Slack rejects messages whose blocks carry ~13k characters in total (bolt-js#2509) although
# no single limit is exceeded; every card keeps its block text under this budget.
TEXT_BUDGET = 9_000


@dataclass(frozen=True)
class Card:
    text: str  # top-level fallback text (notifications, screen readers): escaped, never empty
    blocks: list[dict[str, Any]]  # Block Kit JSON, validated by slack_sdk, <= 50 blocks


def build_card(text: str, blocks: Sequence[Block | dict[str, Any]]) -> Card:
    """Validate every block through slack_sdk (it raises on any limit) and serialize."""
    dicts = [block if isinstance(block, dict) else block.to_dict() for block in blocks]
    if len(dicts) > MAX_BLOCKS:
        raise ValueError(f"{len(dicts)} blocks; Slack accepts at most {MAX_BLOCKS}")
    return Card(text=text, blocks=dicts)


def text_units(value: object) -> int:
    """Units of every ``text`` string inside a block's JSON: what the message budget counts."""
    if isinstance(value, dict):
        return sum(
            units(item) if key == "text" and isinstance(item, str) else text_units(item)
            for key, item in value.items()
        )
    if isinstance(value, list):
        return sum(text_units(item) for item in value)
    return 0


def interaction_id(result: AskResult) -> str | None:
    """The answer id buttons carry (state stays server-side), if there is one that fits."""
    answer_id = result.answer_id
    # Room for the ":down" suffix of the feedback value.
    if answer_id and units(answer_id) <= BUTTON_VALUE_MAX - len(":down"):
        return answer_id
    return None


def button(text: str, action_id: str, value: str, *, primary: bool = False) -> ButtonElement:
    return ButtonElement(
        text=clip(text, BUTTON_TEXT_MAX),
        action_id=action_id,
        value=value,
        style="primary" if primary else None,
    )
