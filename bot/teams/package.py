"""``runbook teams package``: the Teams app package (manifest v1.30 and icons, at the zip root)
to upload in Teams admin center or "Upload a custom app".

The one resource-specific consent permission, ``ChannelMessage.Read.Group``, is what lets Teams
deliver a channel's messages without an @mention (alert posts, thread follow-ups); a team owner
grants it for their team when they add the app. Nothing else is asked for: the bot reads no
chats, settings or members, and answers only in channels switched on with
``runbook teams channel alerts|follow-ups``.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

from bot.teams.drafts.dialog import DRAFT_COMMAND
from bot.teams.icons import color_icon, outline_icon
from bot.teams.message_action import COMMAND_ID
from rag import ConfigurationError

MANIFEST_SCHEMA = (
    "https://developer.microsoft.com/json-schemas/teams/v1.30/MicrosoftTeams.schema.json"
)
# Channel messages without an @mention, in the teams the app is added to (and nowhere else).
RSC_PERMISSIONS = ("ChannelMessage.Read.Group",)
_GUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_HOST = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9-]{1,63})+"
)


def build_manifest(app_id: str, host: str, *, version: str = "1.0.0") -> dict[str, Any]:
    """The manifest for the bot registered as ``app_id`` and served from ``https://host``."""
    if not _GUID.fullmatch(app_id):
        raise ConfigurationError(
            f"--app-id {app_id!r} is not a GUID (the Azure bot's Microsoft App ID)"
        )
    if not _HOST.fullmatch(host):
        raise ConfigurationError(
            f"--host {host!r} must be a host name such as runbook-bot.example.com "
            "(no scheme, port or path)"
        )
    app_id, host = app_id.lower(), host.lower()
    site = f"https://{host}"
    return {
        "$schema": MANIFEST_SCHEMA,
        "manifestVersion": "1.30",
        "version": version,
        "id": app_id,
        "developer": {
            "name": "runbook-bot",
            "websiteUrl": f"{site}/",
            "privacyUrl": f"{site}/privacy",
            "termsOfUseUrl": f"{site}/terms",
        },
        "name": {"short": "Runbook Bot", "full": "Runbook Bot: answers from your runbooks"},
        "description": {
            "short": "Incident answers quoted from your own runbooks",
            "full": (
                "Mention Runbook Bot with an incident question, or use Ask runbooks on an alert "
                "post: it answers in the thread from your team's runbooks, with every sentence "
                "cited and the quotes verified word for word. When the runbooks don't cover it, "
                "it says so instead of guessing. In channels an admin switches on, it reads "
                "channel messages without a mention to answer new alert posts and follow-up "
                "questions in threads it answered; it stores no message it does not answer."
            ),
        },
        "icons": {"color": "color.png", "outline": "outline.png"},
        "accentColor": "#2E3B4E",
        "bots": [
            {
                "botId": app_id,
                "scopes": ["team", "groupChat", "personal"],
                "isNotificationOnly": False,
                "supportsFiles": False,
                "commandLists": [
                    {
                        "scopes": ["team", "groupChat", "personal"],
                        "commands": [{"title": "help", "description": "How to use Runbook Bot"}],
                    }
                ],
            }
        ],
        "composeExtensions": [
            {
                "botId": app_id,
                "commands": [
                    {
                        "id": COMMAND_ID,
                        "type": "action",
                        "title": "Ask runbooks",
                        "description": "Answer this alert from the runbooks",
                        "context": ["message"],
                        "fetchTask": True,
                    },
                    {
                        "id": DRAFT_COMMAND,
                        "type": "action",
                        "title": "Draft a runbook from this thread",
                        "description": "Turn this thread into a runbook pull request",
                        "context": ["message"],
                        "fetchTask": True,
                    },
                ],
            }
        ],
        "validDomains": [host],
        "webApplicationInfo": {"id": app_id, "resource": f"api://{host}/{app_id}"},
        "authorization": {
            "permissions": {
                "resourceSpecific": [
                    {"name": name, "type": "Application"} for name in RSC_PERMISSIONS
                ]
            }
        },
    }


def write_package(app_id: str, host: str, out: Path) -> Path:
    """Write the zip (``manifest.json``, ``color.png``, ``outline.png`` at its root)."""
    manifest = build_manifest(app_id, host)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as package:
        package.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        package.writestr("color.png", color_icon())
        package.writestr("outline.png", outline_icon())
    return out
