"""Escalation as an intent: "who do I page / wake / call / escalate to / get on the phone".

Such a question asks for the runbook's escalation or contacts section (the on-call team, the
duty-manager schedule, the vendor's support number), not for its mitigation steps: before
this, "who do I wake up for etcdInsufficientMembers" opened on a command block. The ranker
opens the lead runbook on its section headed as escalation ("Escalation", "Contacts",
"Rotation Schedule"), else on one whose text says whom to page or escalate to; when the
runbook has neither, the answer opens on a line naming the runbook's owner as who to contact
(``rag.service`` puts it first after verification: it is what was asked). Pure, no I/O.
"""

from __future__ import annotations

import re

from rag.retrieval.evidence import Evidence
from rag.retrieval.rank import section_headings

_ASKS = re.compile(
    r"\b(?:"
    r"who(?:m)? (?:do|should|can|must|would|to) (?:i |we |you )?"
    r"(?:page|wake(?: up)?|call|ring|phone|ping|notify|contact|escalate|alert|get hold of|reach)"
    r"|who to (?:page|wake|call|contact|escalate|ping|notify|reach)"
    r"|who(?:['’]s| is| are) (?:on[- ]?call|the on[- ]?call|responsible|the owner|owning)"
    r"|who owns|(?:which|what) team owns|the owning team"
    r"|escalat(?:e|ion|ing)(?: path| to| this| it)?"
    r"|get (?:\w+ ){1,3}on the (?:phone|line|bridge)"
    r"|(?:which|what) (?:pagerduty |on[- ]?call )?(?:schedule|rotation|team) (?:do|should) (?:i|we)"
    r"|page (?:someone|somebody|the (?:owner|on[- ]?call|team|imoc|cmoc|dba|sre))"
    r"|wake (?:someone|somebody|up)"
    r"|(?:call|contact|reach|phone|ring) (?:\w+ ){0,2}(?:support|vendor)"
    r")\b",
    re.I,
)
_HEADS = re.compile(
    r"escalat|contact|on[- ]?call|who to (?:page|call)|owner|ownership|paging|rotation|"
    r"getting (?:help|support)|support (?:portal|numbers?)",
    re.I,
)
_SAYS = re.compile(
    r"\b(?:escalat\w*|page (?:the|a|an|them)\b|page [`@]|paging|contact|call (?:the|us|them)\b|"
    r"on[- ]?call|pagerduty|opsgenie|reach out|duty manager|incident manager)",
    re.I,
)


def asks_escalation(question: str) -> bool:
    """Whether ``question`` asks whom to page, wake, call or escalate to."""
    return _ASKS.search(question) is not None


def without_escalation_ask(question: str) -> str:
    """``question`` without its asking whom to page ("…, who do I page?"): the gate's
    subject is what the question is about, and "page" or "to" is not (unless nothing is left)."""
    stripped = " ".join(_ASKS.sub(" ", question).split()).strip(" ,?")
    return stripped or question


def is_escalation_section(evidence: Evidence, headings: tuple[str, ...]) -> bool:
    """Whether the chunk sits under a heading of escalation or contacts (``headings``: its
    headings below the runbook's name, ``rag.retrieval.rank.section_headings``), or is a
    runbook whose own name says it is an escalation path."""
    return any(_HEADS.search(heading) for heading in headings) or (
        not headings and _HEADS.search(evidence.title) is not None
    )


def says_whom_to_escalate(evidence: Evidence) -> bool:
    """Whether the chunk's text says whom to page, call or escalate to."""
    return _SAYS.search(evidence.content) is not None


def owner_to_contact(question: str, lead: Evidence) -> str | None:
    """The runbook's owner (front matter ``owner``, CODEOWNERS, a Confluence page's author)
    when ``question`` asks whom to page and the section the answer leads with (``lead``) says
    nothing about escalation: then the owner is who to contact."""
    if not lead.owner or not asks_escalation(question):
        return None
    if is_escalation_section(lead, section_headings(lead)) or says_whom_to_escalate(lead):
        return None
    return lead.owner


def owner_line(owner: str) -> str:
    """The answer's line naming the owner, labelled as what it is: not a runbook's words."""
    return f"Who to contact: this runbook names no escalation path; its owner is {owner}."


# Said when someone asks whom to page and the runbook names no one: quoting its steps alone
# would read as if they answered "who".
NO_CONTACT_LINE = (
    "Who to contact: this runbook names no escalation path and no owner; page the on-call "
    "rotation of the team that runs this service."
)


def contact_line(question: str, lead: Evidence) -> str | None:
    """The line an answer to a who-do-I-page question opens on when the section it quotes
    first names no one: the runbook's owner, or plainly that the runbook names nobody."""
    if not asks_escalation(question):
        return None
    if is_escalation_section(lead, section_headings(lead)) or says_whom_to_escalate(lead):
        return None
    return owner_line(lead.owner) if lead.owner else NO_CONTACT_LINE


# Stems of the asking itself ("who do I page / call support / escalate"): holding one says
# nothing about what the question is about.
_ASKING_STEMS = (
    "page",
    "pagin",
    "wake",
    "call",
    "escal",
    "contact",
    "phone",
    "ring",
    "ping",
    "notif",
    "reach",
    "support",
    "oncal",
    "owner",
    "own",
    "team",
    "first",
    "someon",
    "somebodi",
)


def about_the_question(evidence: Evidence) -> bool:
    """Whether the chunk holds a question word besides the asking ("who do I page"): another
    runbook's escalation section leads only when it is about what the question is about (a
    tenant's every runbook says whom to page)."""
    return any(not term.startswith(_ASKING_STEMS) for term in evidence.matched_terms)
