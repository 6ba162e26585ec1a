"""The channel-neutral side of self-service: who may change a tenant's settings, the audit
log, the tenant lifecycle, and adding a source from a form (tested before it is stored, errors
per field, credentials sealed, one submission stored once)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from psycopg import sql
from pydantic import SecretStr

from bot.cli import main
from bot.core.admin.admins import Actor, is_admin, list_admins
from bot.core.admin.audit import recent_changes
from bot.core.admin.changes import NOT_ADMIN, SettingsChanges
from bot.core.admin.lifecycle import (
    InstallPlace,
    delete_due_tenants,
    is_uninstalled,
    mark_uninstalled,
    provision_install,
    tenant_name,
)
from bot.core.admin.source_form import FieldErrors, SourceDraft, SourceForm
from bot.core.alerts.channel_settings import channel_settings
from bot.core.token_cipher import TokenCipher
from rag import Settings, SourceAccess, Store, find_tenant, list_sources
from tests.fakes.confluence import API_TOKEN, EMAIL, FAKE, ConfluenceFake
from tests.git_repos import GitRepo


@pytest.fixture
def fake() -> Iterator[ConfluenceFake]:
    """The shared fake Confluence on a port of its own choosing (its first line names it)."""
    if not FAKE.exists():
        pytest.skip(f"the shared fake Confluence is not at {FAKE}")
    process = subprocess.Popen(
        [sys.executable, str(FAKE), "--port", "0", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        site = process.stdout.readline().strip()
        assert site.startswith("http://127.0.0.1:"), site
        yield ConfluenceFake(site)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


CIPHER = TokenCipher.from_setting(SecretStr(Fernet.generate_key().decode()), sealing="test secrets")
INSTALLER = "U_INSTALLER"


async def new_tenant(store: Store) -> tuple[str, str]:
    """A freshly installed workspace's (tenant, team)."""
    team = f"T{uuid.uuid4().hex[:8].upper()}"
    place = InstallPlace("slack", team, f"Acme {team}", team_id=team)
    done = await provision_install(store, place, installer=INSTALLER, mapped_tenant=None)
    assert done is not None
    return done.tenant, team


def test_tenant_names_come_from_the_workspace_name() -> None:
    assert tenant_name("Acme Corp (EU)", "T1") == "acme-corp-eu"
    assert tenant_name("🚀", "T0ABC") == "t0abc"


async def test_install_makes_the_installer_the_first_admin_and_is_audited(store: Store) -> None:
    tenant, team = await new_tenant(store)
    assert await find_tenant(store, team_id=team, enterprise_id="") == tenant
    assert [a.principal for a in await list_admins(store, tenant, "slack")] == [INSTALLER]
    [entry] = await recent_changes(store, tenant)
    assert (entry.action, entry.actor, entry.target) == ("tenant.installed", INSTALLER, team)


async def test_a_second_workspace_with_the_same_name_gets_its_own_tenant(store: Store) -> None:
    name = f"Same {uuid.uuid4().hex[:6]}"
    tenants = []
    for team in ("TSAME1" + uuid.uuid4().hex[:4].upper(), "TSAME2" + uuid.uuid4().hex[:4].upper()):
        place = InstallPlace("slack", team, name, team_id=team)
        done = await provision_install(store, place, installer="U1", mapped_tenant=None)
        assert done is not None
        tenants.append(done.tenant)
    assert tenants[1] == f"{tenants[0]}-2"


async def test_an_operator_mapped_workspace_is_left_alone(store: Store, unique_tenant: str) -> None:
    place = InstallPlace("slack", "TOPER", "Oper", team_id="TOPER")
    done = await provision_install(store, place, installer="U1", mapped_tenant=unique_tenant)
    assert done is None
    assert not await mark_uninstalled(store, unique_tenant, surface="slack", retention_days=30)


async def test_uninstall_keeps_the_tenant_a_reinstall_finds_it_and_retention_deletes_it(
    store: Store,
) -> None:
    tenant, team = await new_tenant(store)
    changes, admin = SettingsChanges(store), Actor("slack", INSTALLER)
    assert (await changes.set_channel_switch(tenant, admin, team, "C1", "alerts", True)).changed
    assert await mark_uninstalled(store, tenant, surface="slack", retention_days=30)
    assert await is_uninstalled(store, tenant)
    assert tenant not in await delete_due_tenants(store)  # inside its window
    place = InstallPlace("slack", team, "whatever", team_id=team)
    again = await provision_install(store, place, installer="U_NEW", mapped_tenant=tenant)
    assert again is not None and again.reinstalled and again.tenant == tenant
    assert not await is_uninstalled(store, tenant)
    assert (await channel_settings(store, tenant, team, "C1")).alerts  # as it was
    assert await mark_uninstalled(store, tenant, surface="slack", retention_days=0)
    assert tenant in await delete_due_tenants(store)
    assert await find_tenant(store, team_id=team, enterprise_id="") is None
    async with store.pool.connection() as conn:
        for table in ("tenants", "channel_settings", "settings_audit", "tenant_admins"):
            query = sql.SQL("SELECT count(*) FROM {} WHERE tenant_id = %s")
            cur = await conn.execute(query.format(sql.Identifier(table)), (tenant,))
            row = await cur.fetchone()
            assert row is not None and row[0] == 0, table


async def test_a_member_is_refused_and_nothing_changes(store: Store) -> None:
    tenant, team = await new_tenant(store)
    changes = SettingsChanges(store)
    member = Actor("slack", "U_MEMBER")
    outcome = await changes.set_channel_switch(tenant, member, team, "C1", "alerts", True)
    assert (outcome.changed, outcome.message) == (False, NOT_ADMIN)
    assert not (await channel_settings(store, tenant, team, "C1")).alerts
    assert not (await changes.set_default_owner(tenant, member, "C0OWNERS")).changed
    assert not (await changes.add_admin(tenant, member, "U_MEMBER", "user")).changed
    assert [e.action for e in await recent_changes(store, tenant)] == ["tenant.installed"]


async def test_workspace_admins_and_admin_groups_may_change_settings(store: Store) -> None:
    tenant, _ = await new_tenant(store)
    assert await is_admin(store, tenant, Actor("slack", "U_ANY", platform_admin=True))
    changes = SettingsChanges(store)
    assert (
        await changes.add_admin(tenant, Actor("slack", INSTALLER), "S0SRE", "usergroup")
    ).changed
    assert await is_admin(store, tenant, Actor("slack", "U_SRE", groups=frozenset({"S0SRE"})))
    assert not await is_admin(store, tenant, Actor("slack", "U_SRE", groups=frozenset({"S0DEV"})))
    assert not await is_admin(store, tenant, Actor("teams", INSTALLER))  # another surface


async def test_two_admins_at_once_last_write_wins_and_both_are_audited(store: Store) -> None:
    tenant, team = await new_tenant(store)
    changes = SettingsChanges(store)
    await changes.add_admin(tenant, Actor("slack", INSTALLER), "U_TWO", "user")
    one, two = Actor("slack", INSTALLER), Actor("slack", "U_TWO")
    await asyncio.gather(
        changes.set_default_owner(tenant, one, "C0FIRST"),
        changes.set_default_owner(tenant, two, "C0SECOND"),
    )
    audited = [e for e in await recent_changes(store, tenant) if e.action == "owner.default"]
    assert {e.actor for e in audited} == {INSTALLER, "U_TWO"}
    last = audited[0]  # newest first: its value is the one that stays
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT target FROM owner_targets WHERE tenant_id = %s AND name = ''", (tenant,)
        )
        assert await cur.fetchone() == (last.after,)
    assert audited[1].after == last.before  # the second saw the first's value


async def test_runbook_audit_json_names_who_changed_what(
    store: Store,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tenant, team = await new_tenant(store)
    await SettingsChanges(store).set_channel_switch(
        tenant, Actor("slack", INSTALLER), team, "C9", "follow_ups", True
    )
    monkeypatch.setenv("DATABASE_URL", settings.database_url.get_secret_value())  # type: ignore[union-attr]
    assert await asyncio.to_thread(main, ["audit", "--tenant", tenant, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    first = out["changes"][0]
    assert (first["actor"], first["action"], first["target"]) == (
        INSTALLER,
        "channel.follow_ups",
        "C9",
    )
    assert (first["before"], first["after"]) == (False, True)
    assert await asyncio.to_thread(main, ["tenant", "delete", tenant]) == 2  # needs --yes
    assert await asyncio.to_thread(main, ["tenant", "delete", tenant, "--yes"]) == 0
    assert await find_tenant(store, team_id=team, enterprise_id="") is None


def _form(
    store: Store, *, allow_file: bool = False, allow_private_networks: bool = False
) -> SourceForm:
    access = SourceAccess(allow_file=allow_file, allow_private_networks=allow_private_networks)
    return SourceForm(store, cipher=CIPHER, access=access)


async def test_a_private_or_plain_http_url_is_refused_in_its_field(store: Store) -> None:
    tenant, _ = await new_tenant(store)
    form, admin = _form(store), Actor("slack", INSTALLER)
    for url in ("https://127.0.0.1/acme/runbooks.git", "http://10.1.2.3/r.git", "file:///etc"):
        draft = SourceDraft(kind="git", url=url)
        with pytest.raises(FieldErrors) as refused:
            await form.submit(tenant, admin, draft, submission_key=uuid.uuid4().hex)
        assert set(refused.value.errors) == {"url"}, url
    draft = SourceDraft(kind="git", url="https://runbooks.invalid/r.git")
    with pytest.raises(FieldErrors, match="cannot resolve"):
        await form.submit(tenant, admin, draft, submission_key=uuid.uuid4().hex)
    assert await list_sources(store, tenant=tenant) == []


async def test_the_form_refuses_what_every_connection_refuses_even_with_private_networks_allowed(
    store: Store,
) -> None:
    # The cloud metadata service (link-local) and its IPv4-mapped spelling stay out of reach
    # whatever the operator allows: the form checks the same rule as each connection.
    tenant, _ = await new_tenant(store)
    form, admin = _form(store, allow_private_networks=True), Actor("slack", INSTALLER)
    for url in ("https://169.254.169.254/latest/meta-data", "https://[::ffff:169.254.169.254]/"):
        draft = SourceDraft(
            kind="confluence", url=url, space="OPS", token=SecretStr("t"), email="a@b.c"
        )
        with pytest.raises(FieldErrors) as refused:
            await form.submit(tenant, admin, draft, submission_key=uuid.uuid4().hex)
        assert "link-local" in refused.value.errors["url"], url
    assert await list_sources(store, tenant=tenant) == []


async def test_a_missing_branch_is_an_error_on_the_branch_field(
    store: Store, tmp_path: Path
) -> None:
    tenant, _ = await new_tenant(store)
    repo = GitRepo(tmp_path / "repo")
    repo.write("db.md", "# Failover\n\nPromote the replica.\n")
    repo.commit("first")
    draft = SourceDraft(kind="git", url=repo.url, branch="release")
    with pytest.raises(FieldErrors) as refused:
        await _form(store, allow_file=True).submit(
            tenant, Actor("slack", INSTALLER), draft, submission_key=uuid.uuid4().hex
        )
    assert "release" in refused.value.errors["branch"]


async def test_a_folder_the_branch_lacks_is_an_error_on_the_path_field(
    store: Store, tmp_path: Path
) -> None:
    tenant, _ = await new_tenant(store)
    repo = GitRepo(tmp_path / "repo")
    repo.write("runbooks/db.md", "# Failover\n\nPromote the replica.\n")
    repo.commit("first")
    draft = SourceDraft(kind="git", url=repo.url, path="runbook")
    with pytest.raises(FieldErrors) as refused:
        await _form(store, allow_file=True).submit(
            tenant, Actor("slack", INSTALLER), draft, submission_key=uuid.uuid4().hex
        )
    assert "'runbook'" in refused.value.errors["path"]
    assert await list_sources(store, tenant=tenant) == []


async def test_a_double_submitted_form_adds_one_source(store: Store, tmp_path: Path) -> None:
    tenant, _ = await new_tenant(store)
    repo = GitRepo(tmp_path / "runbooks")
    repo.write("db.md", "# Failover\n\nPromote the replica.\n")
    repo.commit("first")
    form, admin = _form(store, allow_file=True), Actor("slack", INSTALLER)
    draft = SourceDraft(kind="git", url=repo.url, token=SecretStr("ghp_never_shown_1234"))
    first, second = await asyncio.gather(
        form.submit(tenant, admin, draft, submission_key="view-1"),
        form.submit(tenant, admin, draft, submission_key="view-1"),
    )
    assert sorted([first.changed, second.changed]) == [False, True]
    [row] = await list_sources(store, tenant=tenant)
    assert row.settings["branch"] == "main" and row.credential is not None
    assert "ghp_never_shown_1234" not in json.dumps(row.credential)  # sealed at once
    assert CIPHER.open(row.credential) == {"token": "ghp_never_shown_1234"}
    audit = json.dumps([e.as_json() for e in await recent_changes(store, tenant)])
    assert "source.added" in audit and "ghp_never_shown_1234" not in audit


async def test_confluence_wrong_token_and_missing_space_land_on_their_fields(
    store: Store,
    fake: ConfluenceFake,
) -> None:
    tenant, _ = await new_tenant(store)
    form, admin = _form(store, allow_private_networks=True), Actor("slack", INSTALLER)
    wrong = SourceDraft(
        kind="confluence", url=fake.cloud_url, space="OPS", email=EMAIL, token=SecretStr("nope")
    )
    with pytest.raises(FieldErrors) as refused:
        await form.submit(tenant, admin, wrong, submission_key=uuid.uuid4().hex)
    assert set(refused.value.errors) == {"token"}
    missing = SourceDraft(
        kind="confluence", url=fake.cloud_url, space="NOPE", email=EMAIL, token=SecretStr(API_TOKEN)
    )
    with pytest.raises(FieldErrors) as refused:
        await form.submit(tenant, admin, missing, submission_key=uuid.uuid4().hex)
    assert set(refused.value.errors) == {"space"}
    right = SourceDraft(
        kind="confluence", url=fake.cloud_url, space="OPS", email=EMAIL, token=SecretStr(API_TOKEN)
    )
    added = await form.submit(tenant, admin, right, submission_key=uuid.uuid4().hex)
    assert added.changed
    [row] = await list_sources(store, tenant=tenant)
    assert (row.name, row.kind, row.settings["space"]) == ("ops", "confluence", "OPS")
