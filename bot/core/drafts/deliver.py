"""Deliver a reviewed draft where the tenant's runbooks live: a pull request (GitHub), a merge
request (GitLab), a draft page (Confluence); ``NoWritableSource`` when there is none, so the
surface posts the Markdown as a file in the thread instead."""

from __future__ import annotations

import aiohttp

from bot.core.drafts.change import Delivered, FileChange, Submission
from bot.core.drafts.confluence_pages import create_draft_page
from bot.core.drafts.destinations import ForgeTarget, forge_target
from bot.core.drafts.forge_http import DeliveryError, ForgeHttp
from bot.core.drafts.github import open_pull_request
from bot.core.drafts.gitlab import open_merge_request
from bot.core.sources.runs import open_secret
from bot.core.token_cipher import TokenCipher
from rag import SourceRow, Store, list_sources

NEW_RUNBOOK = "new"


class NoWritableSource(DeliveryError):
    def __init__(self) -> None:
        super().__init__("no_source", "the tenant has no git or Confluence source to write to")


async def deliver(
    store: Store,
    submission: Submission,
    *,
    session: aiohttp.ClientSession,
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
        return await _forge(target, change, session, cipher, sleep_cap_s), target.document_id(path)
    for row in sources:
        target = forge_target(row)
        if target is not None:
            path = target.new_file(submission.title, await _items(store, row))
            change = _change(submission, path, submission.markdown, append=False)
            delivered = await _forge(target, change, session, cipher, sleep_cap_s)
            return delivered, target.document_id(path)
    for row in sources:
        if row.kind == "confluence":
            credential = _credential(row, cipher)
            page = await create_draft_page(
                session, row.settings, credential, submission, sleep_cap_s=sleep_cap_s
            )
            return page, None
    raise NoWritableSource()


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
