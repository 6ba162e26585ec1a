"""``ClaudeAnswerer``: a draft from Claude through a forced ``submit_answer`` tool call.

Excerpts travel verbatim inside ``<runbook-excerpt>`` tags and the system prompt declares them
data, not instructions. The one change made to excerpt text is that a literal
``</runbook-excerpt`` becomes ``<\\/runbook-excerpt``, so runbook text cannot close its tag early
and pose as prompt; a quote spanning that exact string would fail verification, which is the safe
direction. Provider failures become ``AnswerProviderError`` here, once.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Sequence
from importlib import resources
from typing import Any, Literal

import anthropic
from pydantic import BaseModel, ValidationError

from rag.answering.answers import Draft, DraftCitation
from rag.errors import AnswerProviderError, ConfigurationError
from rag.retrieval.evidence import Excerpt
from rag.settings import Settings

logger = logging.getLogger(__name__)

MAX_TOKENS = 1024
TOOL_NAME = "submit_answer"

ANSWER_TOOL: anthropic.types.ToolParam = {
    "name": TOOL_NAME,
    "description": "Submit the answer to the question, with a verbatim quote for every citation.",
    "input_schema": {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["answered", "not_in_sources"]},
            "text": {
                "type": "string",
                "description": "The answer, with [n] markers naming the excerpts it relies on.",
            },
            "citations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "n": {"type": "integer", "minimum": 1},
                        "quote": {
                            "type": "string",
                            "description": "At least four words copied exactly from excerpt n.",
                        },
                    },
                    "required": ["n", "quote"],
                },
            },
        },
        "required": ["status", "text", "citations"],
    },
}

_TAG_CLOSE = re.compile(r"</(runbook-excerpt|question)", re.IGNORECASE)


class _SubmittedCitation(BaseModel):
    n: int
    quote: str


class _SubmittedAnswer(BaseModel):
    status: Literal["answered", "not_in_sources"]
    text: str
    citations: list[_SubmittedCitation]


class _Block(BaseModel):
    type: str
    name: str | None = None
    input: dict[str, Any] | None = None


class _Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0


class _Reply(BaseModel):
    """The part of a Messages API response this answerer reads."""

    content: list[_Block]
    stop_reason: str | None = None
    usage: _Usage = _Usage()


def build_anthropic_client(settings: Settings) -> anthropic.AsyncAnthropic:
    """A client with the answer timeout and retry budget from settings (the SDK's are minutes)."""
    if settings.anthropic_api_key is None:
        raise ConfigurationError("ANTHROPIC_API_KEY is not set")
    return anthropic.AsyncAnthropic(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        timeout=settings.answer_timeout_s,
        max_retries=settings.answer_max_retries,
    )


def _load_prompt(name: str) -> str:
    return resources.files("rag").joinpath("prompts", name).read_text(encoding="utf-8")


class ClaudeAnswerer:
    name = "claude"

    def __init__(
        self, *, client: anthropic.AsyncAnthropic, model: str, max_tokens: int = MAX_TOKENS
    ) -> None:
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.system_prompt = _load_prompt("answer_system.md")
        self.correction_prompt = _load_prompt("answer_correction.md")

    async def aclose(self) -> None:
        """Close the client (also an injected one: the answerer is its only user)."""
        await self.client.close()

    async def answer(
        self, question: str, excerpts: Sequence[Excerpt], *, correction: str | None = None
    ) -> Draft:
        messages: list[anthropic.types.MessageParam] = [
            {"role": "user", "content": _render_question(question, excerpts)}
        ]
        if correction:
            messages.append({"role": "user", "content": self._render_correction(correction)})
        try:
            raw = await self.client.messages.with_raw_response.create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=self.system_prompt,
                messages=messages,
                tools=[ANSWER_TOOL],
                tool_choice={"type": "tool", "name": TOOL_NAME},
            )
            body = await raw.read()
        except (anthropic.APIStatusError, anthropic.APIConnectionError) as exc:
            raise _translate(exc) from exc
        return self._draft(body, raw.request_id)

    def _render_correction(self, correction: str) -> str:
        problems = "\n".join(
            f"- {line.strip()}" for line in correction.splitlines() if line.strip()
        )
        return self.correction_prompt.replace("{problems}", problems)

    def _draft(self, body: bytes, request_id: str | None) -> Draft:
        try:
            reply = _Reply.model_validate_json(body)
            tool = next(
                (b for b in reply.content if b.type == "tool_use" and b.name == TOOL_NAME), None
            )
            if tool is None:
                raise _invalid(
                    f"the reply has no {TOOL_NAME} tool call (stop reason {reply.stop_reason})"
                )
            submitted = _SubmittedAnswer.model_validate(tool.input)
        except ValidationError as exc:
            raise _invalid("the reply does not match the expected schema") from exc
        logger.info(
            "claude answered (request %s): %s, %d input / %d output tokens",
            request_id,
            submitted.status,
            reply.usage.input_tokens,
            reply.usage.output_tokens,
        )
        text = submitted.text.strip()
        if submitted.status == "answered" and not text:
            raise AnswerProviderError(
                "answer_provider_empty_response",
                "the answer provider answered with empty text",
                retryable=False,
            )
        return Draft(
            status=submitted.status,
            text=text,
            citations=tuple(DraftCitation(c.n, c.quote) for c in submitted.citations),
            provider=self.name,
            input_tokens=reply.usage.input_tokens,
            output_tokens=reply.usage.output_tokens,
        )


def _render_question(question: str, excerpts: Sequence[Excerpt]) -> str:
    """The user turn: each excerpt verbatim in its tag, then the question in its own."""
    parts = [_render_excerpt(excerpt) for excerpt in excerpts]
    parts.append(f"<question>\n{_neutralize(question)}\n</question>")
    return "\n\n".join(parts)


def _render_excerpt(excerpt: Excerpt) -> str:
    evidence = excerpt.evidence
    attributes = {"n": str(excerpt.n), "doc": evidence.document_id, "section": evidence.section}
    if excerpt.truncated:
        attributes["truncated"] = "true"
    rendered = " ".join(
        f'{key}="{html.escape(value, quote=True)}"' for key, value in attributes.items()
    )
    return f"<runbook-excerpt {rendered}>\n{_neutralize(excerpt.text)}\n</runbook-excerpt>"


def _neutralize(text: str) -> str:
    return _TAG_CLOSE.sub(r"<\\/\1", text)


def _translate(
    exc: anthropic.APIStatusError | anthropic.APIConnectionError,
) -> AnswerProviderError:
    # Messages name the status and error type only: bodies are the provider's words.
    if isinstance(exc, anthropic.APITimeoutError):
        return AnswerProviderError(
            "answer_provider_timeout",
            "the answer provider did not reply in time (RUNBOOK_ANSWER_TIMEOUT_S)",
            retryable=True,
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return AnswerProviderError(
            "answer_provider_unavailable",
            "could not connect to the answer provider",
            retryable=True,
        )
    detail = f"HTTP {exc.status_code}" + (f" {exc.type}" if exc.type else "")
    if isinstance(exc, anthropic.RateLimitError):
        return AnswerProviderError(
            "answer_provider_rate_limited",
            f"the answer provider is rate limiting requests ({detail})",
            retryable=True,
        )
    if isinstance(exc, anthropic.AuthenticationError | anthropic.PermissionDeniedError):
        return AnswerProviderError(
            "answer_provider_authentication_failed",
            f"the answer provider rejected the API key ({detail}); check ANTHROPIC_API_KEY",
            retryable=False,
        )
    if isinstance(exc, anthropic.InternalServerError):
        return AnswerProviderError(
            "answer_provider_unavailable",
            f"the answer provider is unavailable ({detail})",
            retryable=True,
        )
    return AnswerProviderError(
        "answer_provider_request_rejected",
        f"the answer provider rejected the request ({detail})",
        retryable=False,
    )


def _invalid(reason: str) -> AnswerProviderError:
    return AnswerProviderError("answer_provider_invalid_response", reason, retryable=False)
