"""The gap report after 👎 in Teams: the voted-down answer is an open gap near the runbook it
cited, owned by that runbook's owner, and the vote counts against the runbook it opened with."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.gaps.report import gap_report
from bot.teams.tenancy import add_teams_tenant
from rag import FastEmbedder, RagService, Settings, Store, ingest_limits, ingest_path
from tests.adaptive_cards import card_of
from tests.fakes.bot_connector import FakeBotConnector
from tests.fakes.entra_keys import TokenIssuer
from tests.owner_harness import FAILOVER_QUESTION, write_owned_corpus
from tests.teams_harness import (
    APP_ID,
    feedback_value,
    invoke,
    mention,
    new_aad_tenant,
    served_teams,
    teams_settings,
)

FAILOVER = "database/primary-failover.md"


def reason_value(answer_id: str, reason: str) -> dict[str, Any]:
    data = {"answer_id": answer_id, "comment": "", "reason": reason}
    return {"action": {"type": "Action.Execute", "verb": "feedbackReason", "data": data}}


async def test_a_teams_downvote_opens_a_gap_owned_by_the_runbook_the_answer_opened_with(
    settings: Settings,
    store: Store,
    embedder: FastEmbedder,
    service: RagService,
    unique_tenant: str,
    tmp_path: Path,
) -> None:
    corpus = write_owned_corpus(tmp_path, {FAILOVER: "team-data-platform"})
    limits = ingest_limits(settings)
    await ingest_path(store, embedder, corpus, tenant=unique_tenant, prune=False, limits=limits)
    async with FakeBotConnector() as connector, TokenIssuer() as issuer:
        local = teams_settings(settings, jwks_url=issuer.jwks_url, local=True)
        async with served_teams(settings=local, service=service, store=store) as served:
            aad = new_aad_tenant()
            await add_teams_tenant(store, aad, unique_tenant)
            token = issuer.token(audience=APP_ID, service_url=connector.service_url)
            asked = mention(FAILOVER_QUESTION, service_url=connector.service_url, aad_tenant=aad)
            await served.send(asked, token=token)
            [message] = await connector.wait_for_messages(asked["conversation"]["id"], 1)
            [up, _] = card_of(message.final)["actions"]
            answer_id = str(up["data"]["answer_id"])
            where: dict[str, Any] = {
                "service_url": connector.service_url,
                "aad_tenant": aad,
                "conversation_id": message.conversation,
                "reply_to": message.id,
            }
            for value in (feedback_value(answer_id, "down"), reason_value(answer_id, "outdated")):
                status, body, _ = await served.send(
                    invoke("adaptiveCard/action", value, **where), token=token
                )
                assert status == 200 and json.loads(body)["statusCode"] == 200

    report = await gap_report(
        store, unique_tenant, since=timedelta(days=7), stale_after_days=365, now=datetime.now(UTC)
    )
    [gap] = report.gaps
    assert gap.examples == [FAILOVER_QUESTION] and (gap.abstained, gap.downvoted) == (0, 1)
    assert gap.nearest_runbook == "database/primary-failover" and gap.draft is None
    assert (gap.owner, gap.owner_source) == ("team-data-platform", "runbook")
    [down] = report.downvoted
    assert (down.document_id, down.reasons) == ("database/primary-failover", {"outdated": 1})
