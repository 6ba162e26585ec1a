"""What a Confluence source is — a space on a site, read with one credential — and what reading it
gives back: page versions for the listing, whole pages for the fetch.

The credential decides the flavour: an e-mail with an API token is Atlassian Cloud (Basic auth,
REST v2), a personal access token is Data Center / Server (Bearer, REST v1).
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, SecretStr, model_validator

from rag.errors import ConfigurationError

# Space keys are letters and digits; personal spaces are ``~`` and a user name or account id.
_SPACE_KEY = re.compile(r"^~?[A-Za-z0-9][A-Za-z0-9_.:-]{0,254}$")


class ConfluenceFlavour(StrEnum):
    CLOUD = "cloud"
    DATA_CENTER = "data_center"


class ConfluenceAuth(BaseModel):
    """E-mail + API token (Cloud) or a personal access token (Data Center); secrets stay masked
    in ``repr`` and are read only to build the ``Authorization`` header."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    email: str | None = None
    api_token: SecretStr | None = None
    personal_access_token: SecretStr | None = None

    @classmethod
    def cloud(cls, email: str, api_token: str) -> Self:
        return cls(email=email, api_token=SecretStr(api_token))

    @classmethod
    def data_center(cls, personal_access_token: str) -> Self:
        return cls(personal_access_token=SecretStr(personal_access_token))

    @model_validator(mode="after")
    def _one_credential(self) -> Self:
        cloud = bool(self.email and self.api_token and self.api_token.get_secret_value())
        data_center = bool(
            self.personal_access_token and self.personal_access_token.get_secret_value()
        )
        if cloud == data_center or (not cloud and (self.email or self.api_token)):
            raise ValueError(
                "give either an e-mail and an API token (Cloud) or a personal access token "
                "(Data Center), not both and not part of one"
            )
        return self

    @property
    def flavour(self) -> ConfluenceFlavour:
        if self.personal_access_token is not None:
            return ConfluenceFlavour.DATA_CENTER
        return ConfluenceFlavour.CLOUD

    @property
    def credential_name(self) -> str:
        """What to tell a user to check, without showing any of it."""
        if self.flavour is ConfluenceFlavour.DATA_CENTER:
            return "the personal access token"
        return f"the API token of {self.email}"

    def authorization(self) -> str:
        """The ``Authorization`` header value: never log it."""
        if self.personal_access_token is not None:
            return f"Bearer {self.personal_access_token.get_secret_value()}"
        assert self.api_token is not None
        pair = f"{self.email}:{self.api_token.get_secret_value()}".encode()
        return f"Basic {base64.b64encode(pair).decode('ascii')}"


@dataclass(frozen=True)
class ConfluenceSpace:
    """A space as users see it: ``https://acme.atlassian.net/wiki`` (Cloud) or
    ``https://confluence.acme.internal`` (Data Center, with its context path if it has one)."""

    base_url: str
    space_key: str
    label: str | None
    auth: ConfluenceAuth

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigurationError(
                f"Confluence base URL {self.base_url!r} must be an http(s) address such as "
                "https://acme.atlassian.net/wiki"
            )
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ConfigurationError(
                "a Confluence base URL holds no query, fragment or credentials: "
                f"{parts.scheme}://{parts.hostname}{parts.path}"
            )
        if not _SPACE_KEY.fullmatch(self.space_key):
            raise ConfigurationError(f"{self.space_key!r} is not a Confluence space key")
        label = (self.label or "").strip() or None
        object.__setattr__(
            self, "base_url", f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")
        )
        object.__setattr__(self, "label", label)

    @property
    def origin(self) -> str:
        """Scheme and host: Cloud's v2 ``_links.next`` paths are relative to it."""
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def flavour(self) -> ConfluenceFlavour:
        return self.auth.flavour


@dataclass(frozen=True)
class PageVersion:
    """A current page of the space and its version number: what an incremental sync compares."""

    page_id: str
    version: int


@dataclass(frozen=True)
class ConfluencePage:
    """One current page, read whole: its storage-format body and what becomes its metadata."""

    page_id: str
    version: int
    title: str
    ancestors: tuple[str, ...]
    labels: tuple[str, ...]
    updated: dt.datetime
    author: str | None
    web_url: str
    body: str
