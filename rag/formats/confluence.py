"""Confluence storage format's own elements (``ac:`` macros, links, tasks, layouts, ADF).

Macros that hold runbook text keep it — code and ``noformat`` as whole fenced blocks, panels with
their label, ``expand`` with its title — while page chrome (table of contents, child lists,
anchors, Jira issues, images, emoticons) is dropped, and so is a macro the page hides
(``hidden=true``: an excerpt or page-properties table shown only where it is included).
Parameters and ``ri:`` resource identifiers never reach the text, except as the visible name of
a link.
"""

from __future__ import annotations

from typing import Protocol

from lxml import etree

from rag.formats.blocks import Block, clean_prose

_CODE_MACROS = frozenset({"code", "noformat", "code-block", "sql", "sql-query"})
_PANELS = {"info": "Info", "note": "Note", "warning": "Warning", "tip": "Tip", "panel": ""}
# Macros that render navigation, embeds or live data: no text of the page's own.
_CHROME_MACROS = frozenset(
    {
        "anchor", "attachments", "blog-posts", "change-history", "children", "content-report-table",
        "contentbylabel", "contributors", "create-from-template", "gallery", "html", "iframe",
        "include", "excerpt-include", "jira", "jiraissues", "livesearch", "multimedia",
        "pagetree", "pagetreesearch", "popular-labels", "profile", "recently-updated",
        "roadmap", "tasks-report-macro", "toc", "toc-zone", "view-file", "viewfile", "widget",
    }
)  # fmt: skip
_DROPPED = frozenset(
    {
        "ac:caption", "ac:emoticon", "ac:image", "ac:parameter", "ac:placeholder", "ac:task-id",
        "ac:task-status", "ac:task-uuid", "ac:adf-attribute",
    }
)  # fmt: skip
_CONTAINERS = frozenset(
    {
        "ac:layout", "ac:layout-section", "ac:layout-cell", "ac:rich-text-body", "ac:adf-fallback",
        "ac:adf-content", "ac:adf-node",
    }
)  # fmt: skip
# A user link carries only an account id (Cloud) or a user key (Data Center), not a name.
USER_PLACEHOLDER = "@user"


class StorageWalker(Protocol):
    """What a storage-format element needs of the HTML walk that meets it
    (``rag.formats.html_walk``, which imports this module)."""

    in_cell: bool

    def inline(self, text: str) -> None: ...
    def flush(self) -> None: ...
    def emit(self, block: Block | None) -> None: ...
    def code(self, code: str, language: str = "") -> None: ...
    def walk_children(self, element: etree._Element) -> None: ...
    def labelled(self, label: str, body: etree._Element | None) -> None: ...
    def list(self, element: etree._Element, *, ordered: bool) -> None: ...
    def item(self, element: etree._Element) -> None: ...
    def text_in_cell(self, element: etree._Element) -> str:
        """The element's text walked as a table cell renders it (code inline)."""
        ...


def convert(walker: StorageWalker, element: etree._Element) -> None:
    tag = str(element.tag)
    if tag in _DROPPED or tag.startswith("ri:"):
        return
    if tag == "ac:structured-macro" or tag == "ac:macro":
        _macro(walker, element)
    elif tag == "ac:link":
        walker.inline(_link_text(walker, element))
    elif tag == "ac:task-list":
        walker.list(element, ordered=True)
    elif tag == "ac:task":
        task_body = _child(element, "ac:task-body")
        walker.item(task_body if task_body is not None else element)
    elif tag == "ac:adf-extension":
        # The ADF nodes and the HTML fallback say the same thing: read the fallback once.
        fallback = _child(element, "ac:adf-fallback")
        walker.flush()
        for part in [fallback] if fallback is not None else element.iterchildren("ac:adf-node"):
            walker.walk_children(part)
        walker.flush()
    elif tag in _CONTAINERS:
        walker.flush()
        walker.walk_children(element)
        walker.flush()
    else:
        walker.walk_children(element)


def _macro(walker: StorageWalker, element: etree._Element) -> None:
    name = (element.get("ac:name") or "").lower()
    params = _parameters(element)
    body = _child(element, "ac:rich-text-body")
    plain = _child(element, "ac:plain-text-body")
    if name in _CHROME_MACROS or params.get("hidden", "").lower() == "true":
        # ``hidden=true`` (excerpt, page properties): the page does not show the body.
        return
    if name == "status":
        walker.inline(params.get("title", ""))
    elif name in _PANELS:
        # A titled panel leads with its title; an untitled one labels its first paragraph.
        title = clean_prose(params.get("title", ""))
        label = _PANELS.get(name, "")
        if title:
            walker.emit(Block(f"{label}: {title}" if label else title))
            _walk_body(walker, body)
        elif label:
            walker.labelled(label, body)
        else:
            _walk_body(walker, body)
    elif name == "expand":
        title = clean_prose(params.get("title", ""))
        if title:
            walker.emit(Block(title))
        _walk_body(walker, body)
    elif plain is not None and (name in _CODE_MACROS or body is None):
        title = clean_prose(params.get("title", ""))
        if title and not walker.in_cell:
            walker.emit(Block(title))
        walker.code("".join(plain.itertext()), params.get("language", ""))
    else:
        _walk_body(walker, body)


def _walk_body(walker: StorageWalker, body: etree._Element | None) -> None:
    walker.flush()
    if body is not None:
        walker.walk_children(body)
    walker.flush()


def _link_text(walker: StorageWalker, link: etree._Element) -> str:
    rich = _child(link, "ac:link-body")
    if rich is not None:
        text = walker.text_in_cell(rich)
        if text:
            return text
    plain = _child(link, "ac:plain-text-link-body")
    if plain is not None and "".join(plain.itertext()).strip():
        return "".join(plain.itertext())
    for resource in link:
        name = _resource_name(resource)
        if name:
            return name
    return link.get("ac:anchor", "")


def _resource_name(resource: etree._Element) -> str:
    tag = str(resource.tag)
    if tag in ("ri:page", "ri:blog-post"):
        return resource.get("ri:content-title", "")
    if tag == "ri:user":
        return resource.get("ri:username") or USER_PLACEHOLDER
    if tag == "ri:attachment":
        return resource.get("ri:filename", "")
    if tag == "ri:space":
        return resource.get("ri:space-key", "")
    if tag == "ri:url":
        return resource.get("ri:value", "")
    return ""


def _parameters(macro: etree._Element) -> dict[str, str]:
    return {
        child.get("ac:name", ""): "".join(child.itertext()).strip()
        for child in macro.iterchildren("ac:parameter")
    }


def _child(element: etree._Element, tag: str) -> etree._Element | None:
    return next(element.iterchildren(tag), None)
