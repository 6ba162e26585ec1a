"""``runbook ask``: one handler for its four outputs (text, ``--json``, ``--blocks``,
``--teams-card``), recording each ask as an answer from the ``cli`` so the gap report counts it.

Recorded like a chat answer (the answer row with its origin, ``entry = 'cli'``, and its
text-free facts), unless ``--no-record``. Only JSON goes to stdout with ``--json``, ``--blocks``
and ``--teams-card``; anything else (the Block Kit Builder link) goes to stderr. The Slack and
Teams renderers are imported only by the option that prints their card.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from urllib.parse import quote

from bot.core.answers.facts import record_answer_facts
from bot.core.answers.store import AnswerStore, Placement
from bot.core.conversation import storable
from bot.core.owners.runbook_owners import default_owner
from rag import (
    AskResult,
    Runtime,
    Settings,
    ask_result_json,
    format_ask_result,
    open_runtime,
    require_tenant,
)

BUILDER_URL = "https://app.slack.com/block-kit-builder#"
EXIT_OK, EXIT_FAILED = 0, 1
# Where a CLI ask is shown: no workspace, channel or thread.
CLI_PLACEMENT = Placement(
    entry="cli", team_id="", enterprise_id="", channel_id=None, thread_ts=None, ephemeral=False
)


async def ask_command(args: argparse.Namespace, settings: Settings) -> int:
    question = storable(" ".join(args.question))
    async with open_runtime(settings) as runtime:
        await require_tenant(runtime.store, args.tenant)
        result = await runtime.service.ask(args.tenant, question, service=args.service)
        if not args.no_record:
            result = await record_cli_ask(runtime, result, question=question, service=args.service)
        owner = None
        if result.status == "abstained" and not (args.json or args.blocks or args.teams_card):
            owner = await default_owner(runtime.store, args.tenant)
    if args.json:
        print(json.dumps(ask_result_json(result)))
    elif args.blocks:
        print_blocks(result, question=question, settings=settings)
    elif args.teams_card:
        from bot.teams.cards import render_result as render_teams

        print(json.dumps(render_teams(result), indent=2, ensure_ascii=False))
    else:
        print(format_ask_result(result, default_owner=owner))
    return EXIT_FAILED if result.status == "error" else EXIT_OK


async def record_cli_ask(
    runtime: Runtime, result: AskResult, *, question: str, service: str | None
) -> AskResult:
    """Store the answer (origin ``cli``) and its facts; the result carries its answer id.
    Errors are stored too, as a chat error card is, but say nothing to the gap report."""
    answer_id = await AnswerStore(runtime.store).save(
        result, question=question, service=service, placement=CLI_PLACEMENT
    )
    catalog = await runtime.service.catalogs.catalog_for(result.tenant)
    await record_answer_facts(
        runtime.store,
        result,
        answer_id,
        question=question,
        service=service,
        known_services=catalog.services,
        embedding_model=runtime.service.embedder.model_id,
    )
    return replace(result, answer_id=answer_id)


def print_blocks(result: AskResult, *, question: str, settings: Settings) -> None:
    """The card's Block Kit JSON on stdout (and nothing else), its Builder link on stderr."""
    from bot.slack.blocks import render_result

    card = render_result(result, question=question, stale_after_days=settings.stale_after_days)
    print(json.dumps({"blocks": card.blocks}, indent=2, ensure_ascii=False))
    payload = json.dumps({"blocks": card.blocks}, separators=(",", ":"), ensure_ascii=False)
    print(f"Preview: {BUILDER_URL}{quote(payload, safe='')}", file=sys.stderr)
