"""The one message a Teams job shows its cards in: posted once, then updated in place.

The id of every activity a job posts ("Searching runbooks…", then the answer where that could
not be updated) is noted on the job row at once (``JobQueue.note``). A re-run (its worker died,
or a transient connector failure) finds it there and PUTs its card over that activity instead
of posting another: Teams has no cheap way to search a thread for an earlier post, so the
stored id is what makes posting exactly-once. A job that gives up shows "could not answer in
time" in the same place, unless its answer is already there.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from microsoft_agents.activity import ConversationReference
from microsoft_agents.hosting.core import ConnectorClientBase

from bot.core.jobs.queue import Job
from bot.teams.bot import TeamsBot
from bot.teams.cards import Json, render_searching, render_timed_out
from bot.teams.delivery import RETRYABLE_STATUSES, ConnectorError

logger = logging.getLogger(__name__)

_POSTED = "posted"  # payload key: {"activity_id": …, "final": true once a job's card is in it}


@dataclass(frozen=True)
class JobCard:
    bot: TeamsBot
    client: ConnectorClientBase
    job: Job
    reference: ConversationReference
    # An activity the job replaces before it posted anything itself (Retry: the clicked card).
    replaces: str | None = None

    @property
    def activity_id(self) -> str | None:
        posted = self.job.payload.get(_POSTED)
        if isinstance(posted, dict) and isinstance(posted.get("activity_id"), str):
            return str(posted["activity_id"])
        return self.replaces

    @property
    def final(self) -> bool:
        posted = self.job.payload.get(_POSTED)
        return isinstance(posted, dict) and posted.get("final") is True

    async def placeholder(self) -> None:
        """ "Searching runbooks…" to update later, unless a card is there already (a re-run);
        the answer is posted anyway if this fails."""
        if self.activity_id is not None:
            return
        try:
            posted = await self.bot.delivery.post(self.client, self.reference, render_searching())
        except ConnectorError:
            return
        if posted:
            await self._note(posted, final=False)

    async def show(self, card: Json) -> str | None:
        """Put ``card`` in the job's message (posted now if there is none yet); its id.

        A failure the connector may get over (throttling, a gateway error, a refused
        connection) is raised so the job runs again and updates what it finds; a refusal, or
        a post whose outcome is unknown (it may be there), ends here, logged by the delivery.
        """
        try:
            shown = await self.bot.delivery.show(
                self.client, self.reference, card, placeholder=self.activity_id
            )
        except ConnectorError as exc:
            if not exc.outcome_unknown and (exc.status is None or exc.status in RETRYABLE_STATUSES):
                raise
            return None
        if shown:
            await self._note(shown, final=True)
        return shown or None

    async def give_up(self) -> None:
        """The "could not answer in time" card, unless this job's answer is already shown."""
        if self.final:
            return
        await self.show(render_timed_out())

    async def _note(self, activity_id: str, *, final: bool) -> None:
        await self.bot.jobs.note(self.job, {_POSTED: {"activity_id": activity_id, "final": final}})
