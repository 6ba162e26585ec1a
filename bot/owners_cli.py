"""The owners' loop commands: ``owner map|default|list``, ``gaps``, ``digest``, ``retention purge``.

Options in ``bot.cli_parser``; each handler reads settings once and opens the
store itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from bot.core.gaps.report import GapReport, gap_report
from bot.core.owners.runbook_owners import list_owner_targets, map_owner, set_default_owner
from bot.core.retention import purge_expired_text
from rag import Settings, open_store, require_tenant

if TYPE_CHECKING:
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.blocks.card import Card

EXIT_OK, EXIT_USAGE = 0, 2
SLACK_TIMEOUT_S = 10


async def owner_command(args: argparse.Namespace, settings: Settings) -> int:
    async with open_store(settings) as store:
        if args.action == "map":
            mapped = await map_owner(store, args.tenant, args.name, args.target)
            print(f"{args.tenant}: owner {mapped.name} → {mapped.target}")
        elif args.action == "default":
            mapped = await set_default_owner(store, args.tenant, args.target)
            print(f"{args.tenant}: runbooks without a reachable owner → {mapped.target}")
        else:
            for target in await list_owner_targets(store, args.tenant):
                print(f"{target.name or '(default)'} → {target.target}")
    return EXIT_OK


async def gaps_command(args: argparse.Namespace, settings: Settings) -> int:
    report = await _report(settings, args.tenant, args.since, owner=args.owner)
    if args.draft is not None:
        gap = report.gap(args.draft)
        if gap is None:
            print(f"runbook gaps: no open gap {args.draft!r} in {args.tenant}", file=sys.stderr)
            return EXIT_USAGE
        if gap.draft is None:
            print(
                f"runbook gaps: {gap.id} is near {gap.nearest_runbook}: extend that runbook",
                file=sys.stderr,
            )
            return EXIT_USAGE
        print(gap.draft, end="")
        return EXIT_OK
    if args.html is not None:
        # matplotlib (the charts) is a second of import: only the HTML report pays it.
        from bot.core.gaps.html import render_gap_html

        page = await asyncio.to_thread(render_gap_html, report)
        await asyncio.to_thread(args.html.write_text, page, encoding="utf-8")
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        print(format_gaps(report))
        if args.html is not None:
            print(f"HTML report: {args.html}")
    return EXIT_OK


async def digest_command(args: argparse.Namespace, settings: Settings) -> int:
    if settings.slack_bot_token is None:
        print("runbook digest: set SLACK_BOT_TOKEN (and SLACK_API_URL if needed)", file=sys.stderr)
        return EXIT_USAGE
    # The Slack SDK is imported only by the command that posts to Slack.
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.blocks.digest import render_digest
    from bot.slack.delivery.retries import install_retry_handlers
    from bot.slack.owner_messages import owner_recipients

    days = max(1, round(args.since / timedelta(days=1)))
    report = await _report(settings, args.tenant, args.since)
    client = AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        timeout=SLACK_TIMEOUT_S,
    )
    install_retry_handlers(client)
    if args.channel is not None:
        ts = await _post(client, args.channel, render_digest(report, days=days))
        print(f"digest for {args.tenant} posted to {args.channel} (ts {ts})")
        return EXIT_OK
    for owner, target in report.owner_targets.items():
        if target is None:
            print(f"{owner}: no Slack target (runbook owner map / default); not sent")
            continue
        mine = await _report(settings, args.tenant, args.since, owner=owner)
        if not (mine.gaps or mine.downvoted or mine.stale):
            continue  # nothing for them to act on
        card = render_digest(mine, days=days)
        for channel in await owner_recipients(client, target):
            await _post(client, channel, card)
        print(f"digest for {args.tenant}: {owner} → {target}")
    return EXIT_OK


async def _post(client: AsyncWebClient, channel: str, card: Card) -> str | None:
    response = await client.chat_postMessage(
        channel=channel,
        text=card.text,
        blocks=card.blocks,
        unfurl_links=False,
        unfurl_media=False,
    )
    ts = response.get("ts")
    return str(ts) if ts is not None else None


async def retention_command(args: argparse.Namespace, settings: Settings) -> int:
    async with open_store(settings) as store:
        purged = await purge_expired_text(store, retain_days=settings.retain_text_days)
    if args.json:
        print(json.dumps({"retain_text_days": settings.retain_text_days, **purged.counts}))
    else:
        counts = ", ".join(f"{name} {count}" for name, count in purged.counts.items())
        print(f"purged text older than {settings.retain_text_days} days: {counts}")
    return EXIT_OK


async def _report(
    settings: Settings, tenant: str, since: timedelta, *, owner: str | None = None
) -> GapReport:
    """Purge first, so a report never shows text past its retention."""
    async with open_store(settings) as store:
        await require_tenant(store, tenant)
        await purge_expired_text(store, retain_days=settings.retain_text_days)
        return await gap_report(
            store,
            tenant,
            since=since,
            stale_after_days=settings.stale_after_days,
            now=datetime.now(UTC),
            owner=owner,
        )


def format_gaps(report: GapReport) -> str:
    t = report.totals
    lines = [
        f"{report.tenant} since {report.since}: {t['questions']} questions, "
        f"{t['answered']} answered, {t['abstained']} unanswered, "
        f"{t['downvoted_answers']} answered then 👎 ({t['open_gaps']} still open in "
        f"{t['open_groups']} gaps), {t['up']} up, {t['down']} down",
        "Open gaps (questions · gap · owner · nearest runbook):",
        *(
            f"  {g.count:>4}  {g.id}  {g.label or '(no shared terms)'}  · {g.owner}  · "
            + (g.nearest_runbook or f"no runbook covers this: runbook gaps --draft {g.id}")
            + (f"  · {g.thread_draft}: {g.thread_draft_link}" if g.thread_draft else "")
            for g in report.gaps
        ),
        "Closed by a runbook drafted from their thread:",
        *(
            f"  {c.count:>4}  {c.id}  {c.label or '(no shared terms)'}  · closed by "
            f"{c.closed_by} ({c.closed_by_title})  · {c.draft_link}"
            for c in report.closed
        ),
        "Runbooks by 👎 (against the runbook each answer opened with):",
        *(f"  {r.down:>4}  {r.document_id}  · {r.owner}  {r.reasons}" for r in report.downvoted),
        f"Stale runbooks that matter (over {report.stale_after_days} days) by answers:",
        *(
            f"  {r.answers:>4}  {r.document_id}  {r.age_days} days, {r.downvoted_answers} 👎, "
            f"{r.abstained_near} unanswered near  · {r.owner}"
            for r in report.stale
        ),
        "Per runbook (answered / up / down):",
        *(
            f"  {r.answered:>4} / {r.up} / {r.down}  {r.document_id}  · {r.owner}"
            for r in report.runbooks
        ),
    ]
    return "\n".join(lines)
