"""Section button → redrawn card latency of the real Slack and Teams apps over HTTP, against the
fake Slack and the fake Bot Connector (issue 28: "answered within 1 s and shows that section").

    .venv/bin/python -m bench.section_clicks [--questions 20] [--clicks-per-answer 3]

Asks ``--questions`` of acme's golden questions in each surface (a Slack ``app_mention``, a
Teams channel mention), then on every answer's card presses up to ``--clicks-per-answer`` of its
runbook's section buttons, one press at a time as a responder would: in Slack the
``block_actions`` of its ``show_section:<i>`` button (or, past five sections, of the
``pick_section`` menu with that option chosen), timed from the request sent to the
``chat.update`` that redraws the card arriving at the fake; in Teams the ``showSection``
``adaptiveCard/action`` invoke, timed to its response (the redrawn card is in it). Each redrawn
card is checked to show the pressed section. Prints one JSON object (p50/p95/max per surface,
``/proc/loadavg`` before and after) and writes ``section-clicks.json``. Sender, apps and fakes
share one process and event loop, so these are upper bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bench.alert_posts import loadavg
from bench.results_file import machine_facts, write_result
from bench.slack_mentions import SECRET, golden_questions, percentile, slack_app_on_fake
from bot.teams.tenancy import add_teams_tenant
from rag import Settings, add_workspace, open_runtime
from tests.adaptive_cards import card_of
from tests.fakes.bot_connector import FakeBotConnector
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackCall, SlackSender
from tests.teams_harness import invoke, mention, served_teams, teams_settings

TEAM, CHANNEL = "T_BENCH", "C_BENCH"
AAD = "5c0ffee0-cccc-4ddd-8eee-0123456789ab"


class Clicks:
    """Press latencies and whether each redrawn card showed the pressed section."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.shown = 0
        self.answers_with_buttons = 0

    def record(self, seconds: float, *, shows_section: bool) -> None:
        self.seconds.append(seconds)
        self.shown += shows_section

    def summary(self, questions: int) -> dict[str, object]:
        return {
            "questions": questions,
            "answers_with_section_buttons": self.answers_with_buttons,
            "clicks": len(self.seconds),
            "redrawn_showing_pressed_section": self.shown,
            "click_to_redrawn_card_ms": {
                "p50": percentile(self.seconds, 50),
                "p95": percentile(self.seconds, 95),
                "max": percentile(self.seconds, 100),
            },
            "within_1s": sum(s <= 1.0 for s in self.seconds),
        }


def slack_sections(blocks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Section heading → the action Slack sends when it is pressed: a ``show_section:<i>``
    button's, or (past five sections) the ``pick_section`` menu's with that option chosen."""
    found: dict[str, dict[str, Any]] = {}
    for block in blocks:
        for element in block["elements"] if block["type"] == "actions" else []:
            action_id = str(element.get("action_id", ""))
            if element["type"] == "button" and action_id.startswith("show_section:"):
                found[element["text"]["text"]] = {
                    "type": "button",
                    "action_id": action_id,
                    "block_id": block.get("block_id", "nav"),
                    "value": element["value"],
                }
            elif action_id == "pick_section":
                for option in element["options"]:
                    found[option["text"]["text"]] = {
                        "type": "static_select",
                        "action_id": action_id,
                        "block_id": block.get("block_id", "nav"),
                        "selected_option": option,
                    }
    return found


def slack_shows(blocks: list[dict[str, Any]], heading: str) -> bool:
    """The card's runbook line names ``heading`` as the shown section."""
    return any(
        b["type"] == "section"
        and str(b["text"]["text"]).startswith("*Runbook:*")
        and f"*{heading}*" in str(b["text"]["text"])
        for b in blocks
    )


def slack_press(action: dict[str, Any], *, message_ts: str) -> dict[str, Any]:
    """A section press as Slack sends it: ``block_actions`` from the thread's card."""
    return {
        "type": "block_actions",
        "team": {"id": TEAM},
        "user": {"id": "U_BENCH", "team_id": TEAM},
        "api_app_id": "A_RUNBOOK",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": CHANNEL},
        "channel": {"id": CHANNEL},
        "response_url": "http://127.0.0.1:9/unused",
        "trigger_id": f"trigger-{uuid.uuid4().hex[:12]}",
        "actions": [action],
    }


async def measure_slack(
    settings: Settings, runtime: Any, questions: list[str], per_answer: int
) -> Clicks:
    clicks = Clicks()
    await add_workspace(runtime.store, TEAM, "acme")
    async with slack_app_on_fake(settings, runtime, TEAM) as bench:
        for i, question in enumerate(questions):
            ts = f"{1900000000 + i}.000100"
            event = {"type": "app_mention", "user": "U_BENCH", "channel": CHANNEL, "ts": ts}
            text = f"<@{BOT_USER_ID}> {question}"
            assert (await bench.sender.event({**event, "text": text}, team_id=TEAM)).status == 200
            [post] = await bench.slack.wait_for("chat.postMessage", where=in_thread(ts))
            await press_slack(bench.slack, bench.sender, post, per_answer, clicks)
        await bench.served.tasks.drain(60)
    return clicks


def in_thread(ts: str) -> Callable[[SlackCall], bool]:
    return lambda call: call.body["thread_ts"] == ts


async def press_slack(
    slack: FakeSlack, sender: SlackSender, post: SlackCall, per_answer: int, clicks: Clicks
) -> None:
    sections = slack_sections(post.body["blocks"])
    if not sections:
        return  # an abstention, or a runbook of one section
    clicks.answers_with_buttons += 1
    message_ts = post.reply["ts"]
    for pressed, (heading, action) in enumerate(list(sections.items())[:per_answer], start=1):
        started = time.monotonic()
        reply = await sender.interaction(slack_press(action, message_ts=message_ts))
        assert reply.status == 200, reply
        updates = await slack.wait_for(
            "chat.update", pressed, where=lambda c: c.body["ts"] == message_ts
        )
        redrawn = updates[pressed - 1]
        clicks.record(
            redrawn.at - started, shows_section=slack_shows(redrawn.body["blocks"], heading)
        )


def teams_section_buttons(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Section heading → the data of its ``showSection`` button (in a ShowCard's card too)."""
    found: dict[str, dict[str, Any]] = {}
    for element in card.get("body", []):
        for action in element.get("actions", []) if element["type"] == "ActionSet" else []:
            if action.get("verb") == "showSection":
                found[action["title"]] = action["data"]
            if action["type"] == "Action.ShowCard":
                found |= teams_section_buttons(action["card"])
    return found


def teams_shows(card: dict[str, Any], heading: str) -> bool:
    """The card's "Runbook: …" line ends its breadcrumb at ``heading``."""
    return any(
        f" › {heading}" in "".join(r.get("text", "") for r in e["inlines"])
        for e in card.get("body", [])
        if e["type"] == "RichTextBlock" and e["inlines"] and e["inlines"][0]["text"] == "Runbook: "
    )


async def measure_teams(
    settings: Settings, runtime: Any, questions: list[str], per_answer: int
) -> Clicks:
    clicks = Clicks()
    await add_teams_tenant(runtime.store, AAD, "acme")
    local = teams_settings(settings, jwks_url="http://127.0.0.1:9/keys", local=True)
    async with (
        FakeBotConnector() as connector,
        served_teams(settings=local, service=runtime.service, store=runtime.store) as app,
    ):
        for question in questions:
            activity = mention(question, service_url=connector.service_url, aad_tenant=AAD)
            status, _, _ = await app.send(activity)
            assert 200 <= status < 300, status
            thread = activity["conversation"]["id"]
            [message] = await connector.wait_for_messages(thread, 1, within_s=60, settle=0)
            buttons = teams_section_buttons(card_of(message.final))
            if not buttons:
                continue
            clicks.answers_with_buttons += 1
            where: dict[str, Any] = {
                "service_url": connector.service_url,
                "aad_tenant": AAD,
                "conversation_id": message.conversation,
                "reply_to": message.id,
            }
            for heading, data in list(buttons.items())[:per_answer]:
                action = {"type": "Action.Execute", "verb": "showSection", "data": data}
                click = invoke(
                    "adaptiveCard/action", {"action": action, "trigger": "manual"}, **where
                )
                status, body, seconds = await app.send(click)
                response = json.loads(body)
                assert status == 200 and response["statusCode"] == 200, body
                clicks.record(seconds, shows_section=teams_shows(response["value"], heading))
        await app.tasks.drain(60)
    return clicks


async def run(args: argparse.Namespace) -> dict[str, object]:
    settings = Settings(_env_file=None, data_dir=args.data_dir)  # type: ignore[call-arg]
    settings = settings.model_copy(update={"slack_signing_secret": SecretStr(SECRET)})
    questions = golden_questions(args.golden)[: args.questions]
    async with open_runtime(settings) as runtime:
        await runtime.ingest(args.corpus, tenant=None, prune=False, progress=False)
        facts = await machine_facts(runtime.store)
        before = loadavg()
        slack = await measure_slack(settings, runtime, questions, args.clicks_per_answer)
        teams = await measure_teams(settings, runtime, questions, args.clicks_per_answer)
        after = loadavg()
    return {
        "benchmark": "section-clicks",
        "target": "a section press is answered within 1 s and shows that section",
        "clicks_per_answer": args.clicks_per_answer,
        "slack": slack.summary(len(questions)),
        "teams": teams.summary(len(questions)),
        "answerer": runtime.service.answerer.name,
        "machine": facts,
        "loadavg_before": before,
        "loadavg_after": after,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--clicks-per-answer", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=Path("corpus"))
    parser.add_argument("--golden", type=Path, default=Path("evals/golden.jsonl"))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/runbook-bench-sections"))
    parser.add_argument("--output", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    print(write_result(args.output, "section-clicks", asyncio.run(run(args))))


if __name__ == "__main__":
    main()
