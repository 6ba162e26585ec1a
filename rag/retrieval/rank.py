"""The ranking signals a runbook's shape gives, shared by the learned ranker
(``rag.retrieval.ranker``).

- **names**: a question (or alert) naming a runbook's alert exactly (``KubePodCrashLooping``),
  or in words ("statefulset replicas mismatch"), and a service the channel points at;
- **section intent**: "how do I fix" asks for Mitigation sections, "what does it mean",
  "what threshold" or "is there a limit" Meaning, "what breaks", "why should I care", "what's
  the impact on" or "what happens if" Impact, "how do I check" or "how do I figure out why"
  Diagnosis — runbooks repeat the same words in every
  section, so the heading is what tells them apart;
- **placeholders**: a section that only says TODO, TBD, N/A or "see below" answers nothing,
  however close its heading is to the question (its embedding is mostly the breadcrumb).

How much each signal counts is learned (``rag/retrieval/rank_model.json``), not set here.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import lru_cache

from rag.retrieval.evidence import Evidence

# Reciprocal Rank Fusion constant from Cormack et al.; 60 is the value the literature and
# pgvector's own hybrid example use.
RRF_K = 60


@dataclass(frozen=True)
class ScopeHints:
    """Ranking signals: services and documents the question or its channel points at.

    ``documents`` are named exactly (an alert name, a runbook id); ``loose_documents`` are named
    in words (every part of ``etcdNoLeader`` appears in the question); ``alert_document`` is
    the runbook of the alert the question names, when it names exactly one.
    """

    services: frozenset[str] = frozenset()
    documents: frozenset[str] = frozenset()
    loose_documents: frozenset[str] = frozenset()
    # The runbook of the one alert the question names (``KubePodCrashLooping``, an alert post's
    # resolved name): it opens the answer whatever workload names come with it.
    alert_document: str | None = None

    def reasons_for(self, evidence: Evidence) -> tuple[str, ...]:
        reasons = []
        if evidence.service is not None and evidence.service in self.services:
            reasons.append(f"service:{evidence.service}")
        if evidence.document_id in self.documents:
            reasons.append(f"named:{evidence.document_id}")
        elif evidence.document_id in self.loose_documents:
            reasons.append(f"named-in-words:{evidence.document_id}")
        return tuple(reasons)


# "how do I figure out why …" asks how to find something out, not what to do: Diagnosis.
_FINDING_OUT = (
    r"(?:check|see|find|tell|know|look|verify|confirm|figure|work out|determine|debug|"
    r"diagnos|troubleshoot|investigat|identify|spot|detect)"
)
# "what's the impact on …", "what's wrong" ask how bad it is or where it broke, not what the
# alert means: the subject after "what is" names the kind the question asks for.
_NOT_A_MEANING = (
    r"(?:the |our |its |their )?(?:impact|risk|damage|blast radius|consequence|effect|harm|"
    r"danger|fallout|wrong|broken|causing|cause|fix|workaround|procedure|steps?)\b"
)

_INTENTS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    # intent: (how a question asks for it, how a runbook heads it)
    "mitigation": (
        re.compile(
            r"\b(fix|fixe?s|resolve|mitigat\w*|remediat\w*|recover|workaround|get rid|shrink|"
            r"clean ?up|free up|reduce|increase|resize|grow|expand|restart|stop|unblock|"
            r"raise|bump|add more|scale (?:up|out)|"
            rf"how (?:do|can|should) (?:i|we)(?! {_FINDING_OUT})|how to(?! {_FINDING_OUT})|"
            r"what (?:do|should|can) (?:i|we) do|what to do|what now|get (?:it|them) back|"
            r"disable|enable|steps?|procedure)\b",
            re.I,
        ),
        re.compile(
            r"mitigat|remediat|resol|fix|recover|solution|workaround|procedure|steps|what to do",
            re.I,
        ),
    ),
    "diagnosis": (
        re.compile(
            # "peers can't find one of the members" reports a symptom, it asks nobody to find.
            r"\b(check|(?<!can't )(?<!cant )(?<!cannot )(?<!can not )find|which|"
            r"why(?! (?:should|would|do) (?:i|we|anyone|you) care)|"
            r"cause[sd]?|investigat\w*|diagnos\w*|debug|query|queries|"
            r"troubleshoot\w*|identify|detect(?:ing|ion)?|spot|confirm|look at|see|verify|logs?|"
            r"what(?:['’]?s| is) (?:wrong|broken|causing)|"
            r"figure out|find out|work out|determine|tell (?:if|whether|which|what|why|where|who)|"
            r"where (?:do|should|can) (?:i|we) (?:look|start)|where to (?:look|start)|"
            r"tell which)\b",
            re.I,
        ),
        re.compile(r"diagnos|troubleshoot|investigat|debug|check|verif|identif", re.I),
    ),
    "impact": (
        re.compile(
            r"\b(impact\w*|affect\w*|break\w*|consequence\w*|risk\w*|serious|matter|harm\w*|"
            r"dangerous|bad|safe to ignore|ignore|(?:users?|customers?) (?:notice|see|feel|lose)|"
            r"customer[- ]facing|care|worr(?:y|ied)|"
            r"damage|blast radius|fallout|effects? (?:on|of)|"
            r"what happens (?:if|when|to)|what (?:do|would|will) (?:we|i|they) lose|"
            r"stops? working|(?:get|gets|be|are) (?:cleaned|deleted|removed|collected)|"
            r"cleaned up)\b",
            re.I,
        ),
        re.compile(r"impact|consequence|effect", re.I),
    ),
    "meaning": (
        re.compile(
            rf"\b(mean\w*|what(?: is|['’]s)(?! {_NOT_A_MEANING})|"
            # "what does it want me to enable" asks what to do; "about" alone is mostly "about
            # to expire", "complains about", "what do we do about it": only asking what a thing
            # is about, or to be told about it, asks what it means.
            r"what does(?! (?:it|this|that|the alert) wants?)|explain|description|"
            r"what(?:['’]?s| is| are) (?:this|that|it|these|the \w+(?: alerts?)?) about|"
            r"(?:tell (?:me|us)|more|details?|information|info|learn|know) about|"
            r"threshold\w*|at what point|how close|counts? as|"
            # Asking for the limit ("is there a limit", "how many … are allowed") asks for the
            # section that states it.
            r"is there (?:a|any) (?:\w+ )?(?:limit|max(?:imum)?|cap|ceiling|quota)|"
            r"what(?: is|['’]?s) the (?:\w+ )?(?:limit|max(?:imum)?|cap|ceiling|upper bound)|"
            r"(?:how (?:many|much|big|large|high|long)|max(?:imum)?|most)\b[^.?!]{0,60}\ballowed|"
            r"before (?:it|the alert|this alert) (?:alerts|fires|triggers|goes off)|"
            r"considered (?:healthy|normal|fine|ok|fast|slow))\b|"
            # "what does it fire on" asks the condition; "firing on etcd-1" says where it fired.
            r"fir(?:e|es|ing) (?:for|when)|fires? on",
            re.I,
        ),
        re.compile(r"meaning|description|overview|summary|about", re.I),
    ),
}


@lru_cache(maxsize=4096)
def question_intents(question: str) -> frozenset[str]:
    return frozenset(name for name, (asks, _) in _INTENTS.items() if asks.search(question))


def section_headings(evidence: Evidence) -> tuple[str, ...]:
    """The chunk's headings below its runbook's name: a path opens with that name
    (``rag.formats.heading_paths``), after the titles of the pages above it for a Confluence page
    (``ancestors › title › headings``, ``rag.sources.confluence.runbook``)."""
    path = evidence.heading_path
    return path[path.index(evidence.title) + 1 :] if evidence.title in path else path[1:]


def sectioned_documents(found: Iterable[Evidence]) -> frozenset[str]:
    """The runbooks with a candidate under a heading below their name: what such a runbook says
    before its first heading is its preamble, not the whole runbook."""
    return frozenset(e.document_id for e in found if section_headings(e))


def section_intents(
    evidence: Evidence,
    asked: frozenset[str] = frozenset(),
    sectioned: Collection[str] = frozenset(),
) -> frozenset[str]:
    """The section's kinds; for a question that asks what to do (``asked``), a section headed
    by an operation ("Unplanned failover") is a procedure too, and so is a runbook of one
    section named by one ("Disabling a Sidekiq queue"), but not the preamble of a runbook with
    sections (``sectioned``: "Restore payments-db to a point in time" names what its sections
    do, "Run the restore" among them, not its opening paragraph)."""
    # The title is the runbook's name, not a section: only headings below it say what it is.
    # A chunk with none is the runbook's preamble, or the whole of a runbook of one section.
    own = section_headings(evidence)
    headings = own or evidence.heading_path[-1:]
    kinds = _heading_intents(headings)
    preamble = not own and evidence.document_id in sectioned
    # A passage with no heading at all (an MT-RAG passage, a page of bare text) names no operation.
    if (
        not kinds
        and "mitigation" in asked
        and headings
        and not preamble
        and _PROCEDURE_HEAD.match(headings[-1])
    ):
        return frozenset({"mitigation"})
    return kinds


def under_section_word(evidence: Evidence, kind: str) -> bool:
    """Whether the top-level section holding the chunk names ``kind`` by its section word
    ("Mitigation", "Remediation", "Procedure"): the runbook is written in the usual sections,
    not as free prose headed by what each part does ("Recover cluster from minority failure")."""
    headings = section_headings(evidence)
    return bool(headings) and _INTENTS[kind][1].search(headings[0]) is not None


# A heading that names an action ("Disable this alert entirely", "Check for slow queries") is
# a procedure of that kind even under a parent of another kind (Meaning › Disable ...).
_ACTION_KINDS = ("mitigation", "diagnosis")

# A section whose own heading opens with an operation that changes the system ("Failover",
# "Unplanned failover", "Rollback", "Rebuilding the old primary", "Promote a replica") is a
# procedure to a question that asks what to do; to one that asks how bad it is, or where to
# look, it is no answer of any kind ("how bad before we call it a sev2?" must not open on
# "Fail back"). Only its own heading (a breadcrumb also holds page titles such as "Restore
# payments-db to a point in time" above every section of that page) and only the opening word
# count: "Database failover in progress" describes a failure, it does not say what to do.
# A generic doing-verb may open it before the operation's noun ("Run the restore", "Perform a
# manual failover", "Carry out the switchover"): the operation still names the procedure, and
# a verb alone does not ("Run the query", "Start here" stay what they were).
_PROCEDURE_HEAD = re.compile(
    r"^(?:(?:run|perform|do|execute|carry out|start|begin|initiate|trigger|kick off|"
    r"running|performing|doing|executing|carrying out|starting|initiating|triggering)"
    r"(?: (?:the|a|an))? )?"
    r"(?:(?:un)?planned |manual(?:ly)? |emergency |forced? )?"
    r"(?:fail ?over|fail ?back|switch ?over|cut ?over|roll ?back|roll ?out|rollout|"
    r"restor|rebuild|reinit|re-?creat|redeploy|revert|promot|demot|rotat|renew|replac|reboot|"
    r"drain|cordon|evacuat|migrat|upgrad|downgrad|scal(?:e|ing)|shed|purg|flush|reset|"
    r"reindex|resync|failing over|rolling back|switching|moving|move|rout(?:e|ing)|"
    r"disabl|enabl|pause|resum|throttl|kill|delet|remov|clean ?up|free)",
    re.I,
)


@lru_cache(maxsize=65536)
def _heading_intents(headings: tuple[str, ...]) -> frozenset[str]:
    """The kind of the deepest heading that has one: its own section word (Mitigation), or for
    the section itself an action its heading names; otherwise its parents' kind."""
    for depth in range(len(headings) - 1, -1, -1):
        heading = headings[depth]
        kinds = frozenset(name for name, (_, heads) in _INTENTS.items() if heads.search(heading))
        if not kinds and depth == len(headings) - 1:
            kinds = frozenset(name for name in _ACTION_KINDS if _INTENTS[name][0].search(heading))
        if kinds:
            return kinds
    return frozenset()


# A placeholder is a short section made of these words (after links are reduced to their text).
_PLACEHOLDER = re.compile(
    r"^(?:todo|tbd|tba|wip|fixme|xxx|n/?a|to ?do|coming soon|placeholder|"
    r"to be (?:written|added|done|documented|defined)|same as above|see (?:above|below))\b"
)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
# Letters of any script (a section in Japanese is not empty), and "/" for "N/A".
_PROSE_WORD = re.compile(r"(?:[^\W\d_]|/)+")
# Longer than this it says something, whatever word it starts with ("TODO: page the DBA...").
_PLACEHOLDER_MAX_WORDS = 6


@lru_cache(maxsize=65536)
def is_placeholder(content: str) -> bool:
    """Whether a chunk's text is a placeholder (``TODO``, ``* N/A``, ``See [below](#x)``) or
    holds no word at all."""
    words = _PROSE_WORD.findall(_LINK.sub(r"\1", content))
    if len(words) > _PLACEHOLDER_MAX_WORDS:
        return False
    return not words or _PLACEHOLDER.match(" ".join(words).lower()) is not None
