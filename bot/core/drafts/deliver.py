"""Deliver a reviewed draft where the tenant's runbooks live: a pull request (GitHub), a merge
request (GitLab), a draft page (Confluence); ``NoWritableSource`` when there is none, so the
surface posts the Markdown as a file in the thread instead.

The destination's URL is a tenant's input, checked when its source was added; every connection
made here obeys the same rule again (``rag.guarded_session``), so a DNS answer that changed
since, or an IP literal, cannot aim a token-carrying request at an internal service.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp

from bot.core.drafts.change import Delivered, FileChange, Submission
from bot.core.drafts.confluence_pages import create_draft_page
from bot.core.drafts.destinations import ForgeTarget, forge_target
from bot.core.drafts.forge_http import TIMEOUT, DeliveryError, ForgeHttp
from bot.core.drafts.github import open_pull_request
from bot.core.drafts.gitlab import open_merge_request
from bot.core.drafts.review import as_section, destination_of
from bot.core.drafts.store import DraftRow, DraftStore
from bot.core.sources.runs import cipher_or_none, open_secret
from bot.core.token_cipher import TokenCipher
from rag import Settings, SourceAccess, SourceRow, Store, guarded_session, list_sources

NEW_RUNBOOK = "new"


class NoWritableSource(DeliveryError):
    def __init__(self) -> None:
        super().__init__("no_source", "the tenant has no git or Confluence source to write to")


async def deliver_reviewed(
    store: Store,
    row: DraftRow,
    *,
    destination: str,
    asked_by: str,
    settings: Settings,
    last_attempt: bool,
) -> Delivered | DeliveryError:
    """Deliver the draft ``row`` holds to ``destination`` (a runbook's document id, or "new")
    and record the outcome on it: the delivery, or the error the surface explains beside the
    Markdown. Raises an ``unavailable`` error instead while the job has attempts left, so the
    queue retries it (every step looks before it creates)."""
    submission = Submission(
        tenant=row.tenant_id,
        draft_id=row.draft_id,
        title=row.title,
        markdown=row.markdown,
        section=as_section(row.title, row.markdown),
        destination=destination_of(destination),
        thread_link=row.thread_link,
        asked_by=asked_by,
        redactions=row.redactions,
    )
    access, cipher = SourceAccess.from_settings(settings), cipher_or_none(settings)
    drafts = DraftStore(store)
    try:
        delivered, document = await deliver(store, submission, access=access, cipher=cipher)
    except DeliveryError as exc:
        if exc.code == "unavailable" and not last_attempt:
            raise
        await drafts.failed(row.tenant_id, row.draft_id, exc.message)
        return exc
    where = {
        "kind": delivered.kind,
        "number": delivered.number,
        "branch": delivered.branch,
        "path": delivered.path,
    }
    await drafts.delivered(
        row.tenant_id,
        row.draft_id,
        destination=where,
        link=delivered.link,
        document_id=document,
    )
    return delivered


async def deliver(
    store: Store,
    submission: Submission,
    *,
    access: SourceAccess,
    cipher: TokenCipher | None,
    sleep_cap_s: float = 30.0,
) -> tuple[Delivered, str | None]:
    """The delivered draft and the document id it will become once merged and synced."""
    sources = await list_sources(store, tenant=submission.tenant)
    if submission.destination != NEW_RUNBOOK:
        found = await _holding(store, sources, submission.destination)
        if found is None:
            raise DeliveryError(
                "not_found", f"no source of the tenant holds {submission.destination}"
            )
        row, path = found
        target = forge_target(row)
        if target is None:
            raise DeliveryError("refused", f"{row.name} is not on GitHub or GitLab")
        path = f"{target.folder}/{path}" if target.folder else path  # items are inside --path
        change = _change(submission, path, submission.section, append=True)
        async with _session(access, target.api_url) as session:
            delivered = await _forge(target, change, session, cipher, sleep_cap_s)
        return delivered, target.document_id(path)
    for row in sources:
        target = forge_target(row)
        if target is not None:
            path = target.new_file(submission.title, await _items(store, row))
            change = _change(submission, path, submission.markdown, append=False)
            async with _session(access, target.api_url) as session:
                delivered = await _forge(target, change, session, cipher, sleep_cap_s)
            return delivered, target.document_id(path)
    for row in sources:
        if row.kind == "confluence":
            credential = _credential(row, cipher)
            async with _session(access, str(row.settings["base_url"])) as session:
                page = await create_draft_page(
                    session, row.settings, credential, submission, sleep_cap_s=sleep_cap_s
                )
            return page, None
    raise NoWritableSource()


@asynccontextmanager
async def _session(access: SourceAccess, base_url: str) -> AsyncIterator[aiohttp.ClientSession]:
    plain_http = base_url.lower().startswith("http://")
    async with guarded_session(access, plain_http=plain_http, timeout=TIMEOUT) as session:
        yield session


def _change(submission: Submission, path: str, content: str, *, append: bool) -> FileChange:
    verb = "Add a section to" if append else "Add"
    return FileChange(
        branch=submission.branch,
        path=path,
        content=content,
        message=f"{verb} runbook {submission.title} (drafted from an incident thread)",
        title=f"Runbook: {submission.title}",
        body=submission.description(),
        append=append,
    )


async def _forge(
    target: ForgeTarget,
    change: FileChange,
    session: aiohttp.ClientSession,
    cipher: TokenCipher | None,
    sleep_cap_s: float,
) -> Delivered:
    token = _credential(target.source, cipher).get("token")
    if not isinstance(token, str):
        raise DeliveryError(
            "read_only", f"source {target.source.name} has no token to open a pull request with"
        )
    if target.forge == "github":
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }
        http = ForgeHttp(session, target.api_url, headers, sleep_cap_s=sleep_cap_s)
        return await open_pull_request(http, target.repo, change)
    http = ForgeHttp(session, target.api_url, {"PRIVATE-TOKEN": token}, sleep_cap_s=sleep_cap_s)
    return await open_merge_request(http, target.repo, change)


def _credential(row: SourceRow, cipher: TokenCipher | None) -> dict[str, object]:
    return {} if row.credential is None else open_secret(row.credential, cipher, "credential")


async def _items(store: Store, row: SourceRow) -> list[str]:
    """The repository paths of the source's synced runbooks."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT item_id FROM source_items WHERE source_id = %s AND document_id IS NOT NULL",
            (row.source_id,),
        )
        return [str(r[0]) for r in await cur.fetchall()]


_HOLDING = """
SELECT source_id, item_id FROM source_items
WHERE document_id = %(document)s AND source_id = ANY(%(sources)s)
LIMIT 1
"""


async def _holding(
    store: Store, sources: list[SourceRow], document_id: str
) -> tuple[SourceRow, str] | None:
    by_id = {row.source_id: row for row in sources}
    async with store.pool.connection() as conn:
        cur = await conn.execute(_HOLDING, {"document": document_id, "sources": list(by_id)})
        found = await cur.fetchone()
    return None if found is None else (by_id[found[0]], str(found[1]))
