"""A git source's token reaches the server as an HTTP header and nowhere else: not the
command line, not the error, not the logs."""

from __future__ import annotations

import base64
import glob
import logging
import os
import tempfile
from pathlib import Path

import pytest
from aiohttp import web

from bot.server import serving
from rag import GitCredential, GitReader, GitSourceSettings, SourceSyncError
from tests import credentials
from tests.git_repos import LOCAL_SOURCES

PORT = 31253


async def test_a_refused_token_is_sent_as_a_header_and_never_logged_or_shown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[tuple[str, str]] = []

    async def refuse(request: web.Request) -> web.Response:
        seen.append((request.path_qs, request.headers.get("Authorization", "")))
        return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="git"'})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", refuse)
    reader = GitReader(
        name="acme/ops",
        settings=GitSourceSettings(url=f"http://127.0.0.1:{PORT}/acme/runbooks.git"),
        credential=GitCredential(token=credentials.GIT_TOKEN),
        cache_dir=tmp_path / "cache",
        max_file_bytes=100_000,
        access=LOCAL_SOURCES,
    )
    caplog.set_level(logging.DEBUG)

    async with serving(app, host="127.0.0.1", port=PORT):
        with pytest.raises(SourceSyncError) as raised:
            await reader.list_items()

    basic = base64.b64encode(f"x-access-token:{credentials.GIT_TOKEN}".encode()).decode()
    assert seen and seen[0][1] == f"Basic {basic}"
    assert raised.value.code == "source_auth_failed"
    assert credentials.GIT_TOKEN not in str(raised.value)
    assert basic not in str(raised.value)
    assert credentials.GIT_TOKEN not in caplog.text and basic not in caplog.text
    assert credentials.GIT_TOKEN not in (tmp_path / "cache" / "config").read_text()


async def test_a_deploy_key_file_is_gone_after_the_fetch(tmp_path: Path) -> None:
    reader = GitReader(
        name="acme/ops",
        settings=GitSourceSettings(url=f"ssh://git@127.0.0.1:{PORT + 1}/acme/runbooks.git"),
        credential=GitCredential(ssh_key="-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-key\n"),
        cache_dir=tmp_path / "cache",
        max_file_bytes=100_000,
        access=LOCAL_SOURCES,
    )

    with pytest.raises(SourceSyncError) as raised:
        await reader.list_items()

    assert raised.value.code in ("source_unreachable", "source_auth_failed")
    assert not glob.glob(os.path.join(tempfile.gettempdir(), "runbook-git-*", "deploy_key"))
