"""Pages a person looks at: a drafted runbook's Markdown rendered as GitHub would show it, and
the review modal's blocks drawn roughly as Slack draws them (for the screenshots in docs/)."""

from __future__ import annotations

import html
import re
from typing import Any

from markdown_it import MarkdownIt

_STYLE = """
body { font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       margin: 0; background: #f6f8fa; }
main { max-width: 880px; margin: 24px auto; background: #fff; border: 1px solid #d0d7de;
       border-radius: 6px; padding: 24px 40px; }
h1, h2 { border-bottom: 1px solid #d8dee4; padding-bottom: .3em; }
pre { background: #f6f8fa; padding: 12px; border-radius: 6px; white-space: pre-wrap; }
code { font: 13px ui-monospace, Menlo, monospace; background: #eff1f3; padding: .1em .3em; }
pre code { background: none; padding: 0; }
blockquote { color: #59636e; border-left: .25em solid #d0d7de; margin: 0; padding: 0 1em; }
table.front { border-collapse: collapse; margin-bottom: 16px; font-size: 13px; }
table.front td { border: 1px solid #d0d7de; padding: 4px 10px; }
.modal { width: 520px; margin: 24px auto; background: #fff; border-radius: 8px;
         box-shadow: 0 4px 24px rgba(0,0,0,.25); font: 15px/1.46 Lato, Helvetica, sans-serif; }
.modal header { padding: 18px 24px; font-weight: 900; font-size: 22px;
                border-bottom: 1px solid #ddd; }
.modal section { padding: 12px 24px; }
.modal label { display: block; font-weight: 700; margin-bottom: 6px; }
.modal .input { border: 1px solid #868686; border-radius: 4px; padding: 8px 10px;
                white-space: pre-wrap; font-size: 14px; }
.modal .text { max-height: 520px; overflow: hidden; font: 12px ui-monospace, Menlo, monospace; }
.modal footer { padding: 16px 24px; border-top: 1px solid #ddd; text-align: right; }
.button { display: inline-block; padding: 6px 14px; border-radius: 4px; border: 1px solid #aaa;
          margin-left: 8px; font-weight: 700; }
.primary { background: #007a5a; color: #fff; border-color: #007a5a; }
"""


def runbook_page(markdown: str) -> str:
    """The runbook file as a reviewer sees it in the pull request (frontmatter as a table)."""
    front, body = "", markdown
    if markdown.startswith("---\n"):
        head, _, body = markdown[4:].partition("\n---\n")
        rows = [line.split(":", 1) for line in head.splitlines() if ":" in line]
        front = (
            "<table class=front>"
            + "".join(
                f"<tr><td>{html.escape(k)}</td><td>{html.escape(v.strip())}</td></tr>"
                for k, v in rows
            )
            + "</table>"
        )
    rendered = MarkdownIt("commonmark").render(body)
    return _page(f"<main>{front}{rendered}</main>")


def modal_page(view: dict[str, Any]) -> str:
    """A modal's title, blocks and buttons, drawn the way Slack lays them out."""
    parts = [f"<header>{html.escape(view['title']['text'])}</header>"]
    for block in view["blocks"]:
        if block["type"] == "section":
            parts.append(f"<section>{_mrkdwn(block['text']['text'])}</section>")
        elif block["type"] == "input":
            element = block["element"]
            shown = {
                "plain_text_input": lambda e: e.get("initial_value", ""),
                "users_select": lambda e: e.get("initial_user", ""),
                "static_select": lambda e: e["initial_option"]["text"]["text"] + "  ▾",
            }[element["type"]](element)
            kind = "input text" if element.get("multiline") else "input"
            parts.append(
                f"<section><label>{html.escape(block['label']['text'])}</label>"
                f"<div class='{kind}'>{html.escape(shown)}</div></section>"
            )
    close = view.get("close", {}).get("text", "Close")
    submit = view.get("submit", {}).get("text")
    buttons = f"<span class=button>{html.escape(close)}</span>"
    if submit:
        buttons += f"<span class='button primary'>{html.escape(submit)}</span>"
    return _page(f"<div class=modal>{''.join(parts)}<footer>{buttons}</footer></div>")


def _mrkdwn(text: str) -> str:
    escaped = html.escape(text)
    escaped = re.sub(r"&lt;([^|&]+)\|([^&]+)&gt;", r"<a href='\1'>\2</a>", escaped)
    return re.sub(r"\*([^*]+)\*", r"<b>\1</b>", escaped)


def _page(body: str) -> str:
    head = f"<meta charset=utf-8><style>{_STYLE}</style>"
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"
