"""``teams.draft_deliver``: a reviewed draft delivered (pull / merge request, Confluence draft
page) and its link posted in the thread, naming the owner chosen in the dialog; with no
writable source or a read-only token, the Markdown goes into the thread instead, with why."""

from __future__ import annotations

from typing import Any

from microsoft_agents.hosting.core import ConnectorClientBase

from bot.core.drafts.deliver import deliver_reviewed
from bot.core.drafts.forge_http import DeliveryError
from bot.core.drafts.review import KINDS
from bot.core.drafts.store import DraftRow, DraftStore
from bot.core.jobs.queue import Job
from bot.teams.bot import TeamsBot
from bot.teams.cards.elements import Json, adaptive_card, clip, link_run, rich_text, run
from bot.teams.jobs.requests import reference_from

MARKDOWN_MAX = 20_000  # what a card carries; the rest is in the draft row


class DraftDeliverJob:
    def __init__(self, bot: TeamsBot) -> None:
        self.bot = bot
        self.drafts = DraftStore(bot.store)

    async def run(self, job: Job) -> None:
        asked = job.payload
        row = await self.drafts.get(str(asked.get("tenant")), str(asked.get("draft_id")))
        if row is None:
            return
        if row.state == "open" and row.link:
            await self._post(asked, _link_card(row, row.link, "pull request", asked.get("owner")))
            return
        outcome = await deliver_reviewed(
            self.bot.store,
            row,
            destination=str(asked.get("destination") or "new"),
            asked_by=f"{asked.get('asked_by') or 'a responder'} (Teams)",
            settings=self.bot.settings,
            last_attempt=job.exhausted,
        )
        if isinstance(outcome, DeliveryError):
            await self._post(asked, _markdown_card(row, outcome))
            return
        kind = KINDS.get(outcome.kind, "draft")
        await self._post(asked, _link_card(row, outcome.link, kind, asked.get("owner")))

    async def give_up(self, job: Job) -> None:
        row = await self.drafts.get(
            str(job.payload.get("tenant")), str(job.payload.get("draft_id"))
        )
        if row is None or row.state == "open":
            return
        error = DeliveryError("unavailable", "the runbook source did not answer in time")
        await self.drafts.failed(row.tenant_id, row.draft_id, error.message)
        await self._post(job.payload, _markdown_card(row, error))

    async def _post(self, asked: dict[str, Any], card: Json) -> None:
        reference = reference_from(asked)

        async def post(client: ConnectorClientBase) -> None:
            await self.bot.delivery.post(client, reference, card)

        await self.bot.in_conversation(reference, post)


def _link_card(row: DraftRow, link: str, kind: str, owner: object) -> Json:
    inlines = [
        run("📝 A runbook drafted from this thread is ready for review: "),
        link_run(row.title, link, weight="Bolder"),
        run(f" ({kind})."),
    ]
    if isinstance(owner, str) and owner:
        inlines.append(run(f" Owner: {owner}, please review it."))
    return adaptive_card([rich_text(*inlines)])


def _markdown_card(row: DraftRow, exc: DeliveryError) -> Json:
    why = {
        "read_only": f"The runbook source refused to write ({exc.message}).",
        "no_source": "This organisation's runbooks have no git or Confluence source to write to.",
    }.get(exc.code, f"It could not be delivered: {exc.message}.")
    text = f"📝 {why} Here is the runbook drafted from this thread, to add by hand."
    return adaptive_card(
        [
            rich_text(run(text)),
            rich_text(run(clip(row.markdown, MARKDOWN_MAX), fontType="Monospace")),
        ]
    )
