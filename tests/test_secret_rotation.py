"""Key rotation as the README tells it (generate a key, put it first, `runbook secrets
reencrypt`, drop the old key) keeps every sealed secret usable: source credentials and webhook
secrets, Slack tokens, Graph clientStates. A secret no key opens fails its own source with a
clear error, and its webhook answers 401, never 500."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
from psycopg.types.json import Jsonb
from pydantic import SecretStr

from bot.core.jobs.queue import JobQueue
from bot.core.sources.runs import run_sync
from bot.core.token_cipher import TokenCipher
from bot.server import build_web_app, serving
from bot.slack.oauth_stores import PostgresInstallationStore
from bot.source_hooks import source_hook_routes
from bot.teams.graph.subscriptions import client_state_of, subscription_row
from rag import FastEmbedder, Settings, SourceRow, Store, add_source
from tests.fakes.confluence import PAT, running_fake
from tests.git_repos import GitRepo
from tests.slack_harness import forget_unfinished_jobs
from tests.test_slack_cli import runbook
from tests.test_sources_cli import DISK, cli_env
from tests.test_token_encryption import CLIENT_ID, installation, team_id

PORT = 31291
CHANNEL = "19:oncall@thread.tacv2"
# Loopback fakes: the operator allowances a test may set (issue 36).
ALLOW = {"RUNBOOK_SOURCE_ALLOW_FILE": "true", "RUNBOOK_SOURCE_ALLOW_PRIVATE_NETWORKS": "true"}


def cipher(*keys: str) -> TokenCipher:
    return TokenCipher.from_setting(SecretStr(",".join(keys)), sealing="test secrets")


@asynccontextmanager
async def hooks_serving(store: Store, settings: Settings, keys: str | None) -> AsyncIterator[str]:
    """``POST /hooks/git/{source_id}`` as ``runbook serve`` mounts it, with these keys."""
    jobs = await JobQueue.open(store, settings)
    app = build_web_app(
        surfaces=[source_hook_routes(store, jobs, None if keys is None else cipher(keys))]
    )
    try:
        async with serving(app, host="127.0.0.1", port=PORT) as port:
            yield f"http://127.0.0.1:{port}"
    finally:
        await jobs.close()
        await forget_unfinished_jobs(store)


async def ping(base: str, source_id: str, secret: str) -> int:
    """A GitHub ``ping`` signed with ``secret``: 202 once verified (it queues nothing)."""
    body = json.dumps({"zen": "Keep it logically awesome."}).encode()
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    headers = {
        "X-Hub-Signature-256": f"sha256={digest}",
        "X-GitHub-Event": "ping",
        "Content-Type": "application/json",
    }
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{base}/hooks/git/{source_id}", data=body, headers=headers) as response,
    ):
        return response.status


async def keep_only_this_tenants_secrets(store: Store, tenant: str) -> None:
    """reencrypt walks whole tables, as it must in a deployment; in this shared test database
    other tests' rows are sealed with keys of their own, which no deployment would hold."""
    async with store.pool.connection() as conn:
        await conn.execute("DELETE FROM slack_bots")
        await conn.execute("DELETE FROM slack_installations")
        await conn.execute("DELETE FROM sources WHERE tenant_id <> %s", (tenant,))
        await conn.execute("DELETE FROM teams_graph_subscriptions WHERE tenant_id <> %s", (tenant,))


async def graph_subscription(store: Store, tenant: str, sealed: dict[str, str]) -> str:
    """A channel's live Graph subscription; returns its organisation's id."""
    aad = str(uuid.uuid4())
    async with store.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO teams_graph_subscriptions (tenant_id, aad_tenant_id, channel_id, "
            "team_id, subscription_id, client_state, expires_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, now() + interval '50 minutes')",
            (tenant, aad, CHANNEL, str(uuid.uuid4()), str(uuid.uuid4()), Jsonb(sealed)),
        )
    return aad


@pytest.mark.slow  # a dozen CLI runs, each loading the model
async def test_the_readmes_key_rotation_keeps_every_source_syncing_and_every_secret_opening(
    store: Store, database_url: str, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", DISK)
    repo.commit("one")
    old_key = runbook("secrets", "generate-key").stdout.strip()
    env = cli_env(
        database_url,
        tmp_path / "data",
        CONFLUENCE_PAT=PAT,
        RUNBOOK_ENCRYPTION_KEYS=old_key,
        **ALLOW,
    )
    with running_fake() as fake:
        confluence = runbook(
            "source", "add", unique_tenant, "confluence", fake.data_center_url,
            *("--space", "DBA", "--pat-env", "CONFLUENCE_PAT", "--name", "dba", "--json"),
            env=env,
        )  # fmt: skip
        git = runbook(
            "source", "add", unique_tenant, "git", repo.url, "--name", "git", "--json", env=env
        )
        assert confluence.returncode == 0, confluence.stderr
        assert git.returncode == 0, git.stderr
        await keep_only_this_tenants_secrets(store, unique_tenant)
        slack_team = team_id()
        await PostgresInstallationStore(
            store, client_id=CLIENT_ID, cipher=cipher(old_key)
        ).async_save(installation(slack_team))
        graph_aad = await graph_subscription(
            store, unique_tenant, cipher(old_key).seal({"secret": "graph-client-state"})
        )

        # The README: new key first, `runbook secrets reencrypt`, drop the old.
        new_key = runbook("secrets", "generate-key").stdout.strip()
        rotating = runbook(
            "secrets", "reencrypt", env=env | {"RUNBOOK_ENCRYPTION_KEYS": f"{new_key},{old_key}"}
        )
        env["RUNBOOK_ENCRYPTION_KEYS"] = new_key
        synced = runbook("source", "sync", "--tenant", unique_tenant, "--json", env=env)

    assert rotating.returncode == 0, rotating.stderr
    # Confluence's credential and webhook secret, git's webhook secret, Slack's installation
    # and bot, the Graph clientState.
    assert "re-encrypted 6 stored secret(s)" in rotating.stdout
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert {o["name"]: o["outcome"] for o in json.loads(synced.stdout)["sources"]} == {
        "git": "synced",
        "dba": "synced",
    }
    new_only = cipher(new_key)
    async with hooks_serving(store, settings, new_key) as base:
        for added in (confluence, git):
            source = json.loads(added.stdout)
            assert await ping(base, source["source_id"], source["webhook_secret"]) == 202
    bot = await PostgresInstallationStore(
        store, client_id=CLIENT_ID, cipher=new_only
    ).async_find_bot(enterprise_id=None, team_id=slack_team)
    assert bot is not None and bot.bot_token == f"xoxb-{slack_team}-secret-bot-token"
    row = await subscription_row(store, unique_tenant, graph_aad, CHANNEL)
    assert row is not None and client_state_of(row, new_only) == "graph-client-state"


async def sealed_source(store: Store, tenant: str, key: str) -> SourceRow:
    return await add_source(
        store,
        tenant=tenant,
        name="ops",
        kind="confluence",
        settings={"base_url": "https://confluence.example.com", "space": "OPS", "label": None},
        credential=cipher(key).seal({"pat": PAT}),
        webhook_secret=cipher(key).seal({"secret": "hook-secret"}),
    )


async def test_a_credential_no_key_opens_fails_its_own_source_with_a_clear_error(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str
) -> None:
    old_key, new_key = (runbook("secrets", "generate-key").stdout.strip() for _ in range(2))
    row = await sealed_source(store, unique_tenant, old_key)

    outcome = await run_sync(store, embedder, row, settings=settings, cipher=cipher(new_key))
    unset = await run_sync(store, embedder, row, settings=settings, cipher=None)

    assert not outcome.synced and outcome.error_code == "secret_unreadable"
    assert outcome.error is not None
    assert f"the credential of source '{unique_tenant}/ops'" in outcome.error
    assert (
        "RUNBOOK_ENCRYPTION_KEYS" in outcome.error and "runbook secrets reencrypt" in outcome.error
    )
    assert "Slack" not in outcome.error
    assert unset.error is not None and "set RUNBOOK_ENCRYPTION_KEYS" in unset.error
    assert "Slack" not in unset.error


async def test_a_webhook_whose_secret_no_key_opens_answers_401_not_500(
    store: Store, settings: Settings, unique_tenant: str
) -> None:
    old_key, new_key = (runbook("secrets", "generate-key").stdout.strip() for _ in range(2))
    row = await sealed_source(store, unique_tenant, old_key)

    async with hooks_serving(store, settings, new_key) as base:
        rotated_out = await ping(base, str(row.source_id), "hook-secret")
    async with hooks_serving(store, settings, None) as base:
        no_keys = await ping(base, str(row.source_id), "hook-secret")
    async with hooks_serving(store, settings, f"{new_key},{old_key}") as base:
        both = await ping(base, str(row.source_id), "hook-secret")

    assert (rotated_out, no_keys, both) == (401, 401, 202)


async def raw_post(base: str, path: str, head: bytes, body: bytes) -> int:
    """A request written byte for byte (an HTTP client would refuse a header that is not text)."""
    host, port = base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        b"POST " + path.encode() + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\n" + head
        + b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode()
        + b"\r\nConnection: close\r\n\r\n" + body
    )  # fmt: skip
    await writer.drain()
    status = await asyncio.wait_for(reader.readline(), timeout=10)
    writer.close()
    await writer.wait_closed()
    return int(status.split(b" ")[1])


async def test_a_signature_header_that_is_not_utf8_is_a_401(
    store: Store, settings: Settings, unique_tenant: str
) -> None:
    row = await add_source(
        store,
        tenant=unique_tenant,
        name="ops",
        kind="git",
        settings={"url": "https://git.example.com/acme/runbooks.git", "branch": "main"},
        credential=None,
        webhook_secret={"secret": "hook-secret"},
    )
    body = json.dumps({"ref": "refs/heads/main", "after": "0" * 40}).encode()
    path = f"/hooks/git/{row.source_id}"

    async with hooks_serving(store, settings, None) as base:
        github = await raw_post(
            base,
            path,
            b"X-Hub-Signature-256: sha256=\xff\xfe\xfd\r\nX-GitHub-Event: push\r\n",
            body,
        )
        gitlab = await raw_post(base, path, b"X-Gitlab-Token: hook-\xe9secret\r\n", body)

    assert (github, gitlab) == (401, 401)
