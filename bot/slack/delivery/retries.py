"""Retry policy of every Slack Web API call the app makes (Bolt copies it to per-request clients).

Retried: HTTP 429 after its Retry-After (Slack stored nothing), and for calls that are safe to
repeat, 500/503 once and a connection dropped before the reply. Never retried blindly: a post
(``chat.postMessage`` and kin) after a 5xx or a dropped connection, nor anything after a
timeout: Slack may have stored the message, and a second post would show it twice. Posts of an
unknown outcome are looked for first (``Delivery.post_once``).
"""

from __future__ import annotations

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

# Each call creates a message; repeating one that Slack may have stored duplicates it.
NOT_REPEATABLE = frozenset(
    {
        "chat.postMessage",
        "chat.postEphemeral",
        "chat.scheduleMessage",
        "chat.meMessage",
        "chat.startStream",
    }
)

# A listener must not sleep a minute inline (conversations.replies can say Retry-After: 60 for
# non-Marketplace apps); past this the call fails and the user sees why instead of waiting.
MAX_INLINE_WAIT_S = 10.0


class CappedRateLimitRetryHandler(AsyncRateLimitErrorRetryHandler):
    """Slack's 429 handler, but only when Retry-After is short enough to wait for inline."""

    def __init__(self, max_retry_count: int = 2, max_wait_s: float = MAX_INLINE_WAIT_S) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait_s = max_wait_s

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        return retry_after(response) <= self.max_wait_s


class _NeverRepeatsAPost(AsyncRetryHandler):
    """Mixed in before a built-in handler: calls that create a message are never repeated."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if api_method(request) in NOT_REPEATABLE:
            return False
        return await super()._can_retry_async(
            state=state, request=request, response=response, error=error
        )


class RepeatableServerErrorRetryHandler(_NeverRepeatsAPost, AsyncServerErrorRetryHandler):
    """500/503 retried once, except for calls that create a message."""


class RepeatableConnectionErrorRetryHandler(_NeverRepeatsAPost, AsyncConnectionErrorRetryHandler):
    """A dropped connection retried once, except for calls that create a message."""


def api_method(request: HttpRequest) -> str:
    """``chat.postMessage`` from ``https://slack.com/api/chat.postMessage?…``."""
    return request.url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


def retry_after(response: HttpResponse) -> float:
    for name, values in response.headers.items():
        if name.lower() == "retry-after" and values:
            value = values[0] if isinstance(values, list) else values
            try:
                return float(value)
            except ValueError:
                break
    return 1.0


def install_retry_handlers(client: AsyncWebClient) -> None:
    """Add the policy to ``client`` (idempotent: the same client may back several apps)."""
    wanted: list[AsyncRetryHandler] = [
        RepeatableConnectionErrorRetryHandler(max_retry_count=1),
        CappedRateLimitRetryHandler(),
        RepeatableServerErrorRetryHandler(max_retry_count=1),
    ]
    # slack_sdk's client starts with a plain connection-error handler, which would re-post.
    blind = (AsyncConnectionErrorRetryHandler, AsyncServerErrorRetryHandler)
    client.retry_handlers[:] = [h for h in client.retry_handlers if type(h) not in blind]
    present = {type(handler) for handler in client.retry_handlers}
    client.retry_handlers.extend(h for h in wanted if type(h) not in present)
