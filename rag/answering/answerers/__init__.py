"""Answerers: the offline extractive default and Claude, chosen from settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rag.answering.answerers.extractive import ExtractiveAnswerer
from rag.answering.answers import Answerer
from rag.settings import Settings

if TYPE_CHECKING:
    import anthropic

    from rag.answering.answerers.claude import ClaudeAnswerer, build_anthropic_client

__all__ = ["ClaudeAnswerer", "ExtractiveAnswerer", "build_anthropic_client", "build_answerer"]

# The anthropic SDK takes seconds to import; a deployment without an API key never pays for it.
_LAZY = frozenset({"ClaudeAnswerer", "build_anthropic_client"})


def build_answerer(
    settings: Settings, *, anthropic_client: anthropic.AsyncAnthropic | None = None
) -> Answerer:
    """Claude when an API key is configured (or a client is handed in), else extractive."""
    if settings.anthropic_api_key is None and anthropic_client is None:
        return ExtractiveAnswerer()
    from rag.answering.answerers.claude import ClaudeAnswerer, build_anthropic_client

    client = anthropic_client or build_anthropic_client(settings)
    return ClaudeAnswerer(client=client, model=settings.anthropic_model)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from rag.answering.answerers import claude

        return getattr(claude, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
