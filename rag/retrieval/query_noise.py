"""What an on-call types around a question that says nothing about which runbook answers it.

"KubePodCrashLooping payments-api-7d9f8c-xk2lp on ip-10-4-1-77.ec2.internal, how bad is this
NOW" asks what "KubePodCrashLooping … payments-api, how bad is this" asks: addresses, host
names, pod hashes, ports, clock times and urgency words ("NOW", "asap", "fix it fast",
"pls") name which instance fired and how stressed the asker is, never which runbook applies.
To the keyword half they are words the tenant never uses (counted against answering by the
gate), and they pull the embedding off the question's topic. ``without_noise`` takes them out
before retrieval, the ranker and the gate read the question; the asker's own text is what is
shown and stored. Pure, no I/O.

A workload's name stays where an instance suffix follows it (``payments-api-7d9f8c-xk2lp`` ->
``payments-api``, ``etcd-ip-10-0-1-5`` -> ``etcd``): the name may be what is asked about.
"""

from __future__ import annotations

import re

# A dotted IPv4 address, with a port or a prefix length.
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+|/\d{1,2})?$")
# A host or pod name with a number in it: segments split by "-" (and a domain after a dot).
_HOSTLIKE = re.compile(r"^[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+(?:\.[A-Za-z0-9-]+)*(?::\d+)?$")
_DOTTED_HOST = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+){2,}(?::\d+)?$")
# A version ("v1.2.3", "3.5") is what runs, which a runbook may well be about.
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+$", re.I)
# A clock time ("3am"); a measured value ("97%") stays: "over 90%" says how bad.
_CLOCK = re.compile(r"^\d{1,2}(?::\d\d)?(?:am|pm)$", re.I)
# Labels whose value says where it fired (``instance=10.1.2.3:9100``, ``pod=web-1``).
_PLACE_KEYS = frozenset(
    "instance pod host hostname node ip namespace ns container cluster region zone".split()
)
# Words an instance name starts with that say what kind of place it is, not what runs there.
_PLACE_WORDS = frozenset(
    "ip node host server worker master vm instance i pod box machine nodes hosts".split()
)
# Urgency the asker adds wherever it falls: upper-case shouts and words that mean "hurry".
_SHOUTS = frozenset("NOW ASAP URGENT HELP HURRY PLS PLZ".split())
_HURRY = frozenset("asap urgent urgently hurry pls plz".split())
# "fast", "quick", "now" at the end of a clause ("fix it fast", "what do i do now?") or
# before the question proper ("quick, what do i check") say how soon, not what; "what now"
# and "fast enough" are questions of their own.
_SOON = frozenset("fast quick quickly immediately".split())
_DEGREE = frozenset("how too so very not as enough".split())
_BE = frozenset("is are was were be been".split())
_PRONOUNS = frozenset("it this that they".split())
_SINCE = frozenset("for since".split())
_UNITS = frozenset(
    "s sec secs seconds m min mins minute minutes h hr hrs hour hours d day days".split()
)
_PREPOSITIONS = frozenset("on at from in for to via".split())
_EDGE = "\"'`()[]{}<>,;*"
_TRAILING = ".:!?"
_WH = frozenset("what how where who which why can is should do".split())


def without_noise(question: str) -> str:
    """``question`` without instance names, addresses, values and urgency words (unless that
    leaves nothing). Each line is cleaned on its own; spacing is normalised."""
    lines = [_clean_line(line) for line in question.splitlines()]
    cleaned = "\n".join(line for line in lines if line)
    return cleaned if cleaned.strip() else question


def _clean_line(line: str) -> str:
    # Places first, then urgency: "fix it fast from 10.0.0.5" ends on "fast" once the
    # address has gone, and "fast" at the end of a clause is urgency.
    return " ".join(_without_urgency(_without_places(line.split()))).strip(" ,")


def _core(token: str) -> str:
    return token.strip(_EDGE).rstrip(_TRAILING).strip(_EDGE)


def _without_places(tokens: list[str]) -> list[str]:
    kept: list[str] = []
    for index, token in enumerate(tokens):
        if _is_duration(tokens, index):
            # "for 10 min", "since 20 minutes": how long it has been going on, not what.
            del kept[-2:]
            _keep_punctuation(kept, token[len(token.rstrip(_TRAILING + _EDGE)) :])
            continue
        core = _core(token)
        tail = token[len(token.rstrip(_TRAILING + _EDGE)) :]
        labelled = "=" in core
        replacement = _place_replacement(core)
        if replacement is None:
            kept.append(token)
        elif replacement:
            kept.append(replacement + tail)
        else:
            # A dropped place takes its preposition along ("on ip-10-0-3-14"; a label such as
            # ``instance=…`` has none); its punctuation stays with the word before it
            # ("… 10.0.0.5, is it safe" -> "…, is it safe").
            if not labelled and kept and kept[-1].lower() in _PREPOSITIONS:
                kept.pop()
            _keep_punctuation(kept, tail)
    return kept


def _without_urgency(tokens: list[str]) -> list[str]:
    kept: list[str] = []
    for index, token in enumerate(tokens):
        core = _core(token)
        tail = token[len(token.rstrip(_TRAILING + _EDGE)) :]
        if not _is_urgency(core, tokens, index):
            kept.append(token if core or not set(token) <= set("!") else "")
            continue
        if core.lower() == "now" and kept and kept[-1].lower() == "right":
            kept.pop()  # "right now"
        _keep_punctuation(kept, tail)
    return [token for token in kept if token]


def _is_duration(tokens: list[str], index: int) -> bool:
    """Whether ``tokens[index]`` is the unit of "for|since <number> <unit>"."""
    if index < 2 or tokens[index - 2].lower() not in _SINCE:
        return False
    number, unit = tokens[index - 1], _core(tokens[index]).lower()
    return number.isdigit() and unit in _UNITS


def _keep_punctuation(kept: list[str], tail: str) -> None:
    punctuation = tail.strip("!").rstrip(".")
    if punctuation and kept and not kept[-1].endswith(tuple(_TRAILING + ",")):
        kept[-1] += punctuation[:1]


def _is_urgency(core: str, tokens: list[str], index: int) -> bool:
    if not core:
        return False
    if core in _SHOUTS or core.lower() in _HURRY or set(core) <= {"!"}:
        return True
    if core.lower() == "now" and index and tokens[index - 1].lower() == "right":
        return True
    return core.lower() in _SOON and _soon_is_urgency(tokens, index)


def _place_replacement(core: str) -> str | None:
    """None to keep the token as it is, "" to drop it, else the name to keep in its place."""
    if not core:
        return None
    if "=" in core:
        key, _, value = core.partition("=")
        if key.lower() in _PLACE_KEYS:
            return ""
        inner = _instance_name(value)
        return None if inner is None else f"{key}={inner}" if inner else ""
    if _CLOCK.match(core):
        return ""
    return _instance_name(core)


def _instance_name(core: str) -> str | None:
    """None when ``core`` is no instance; else the workload name it carries ("" for none)."""
    if _IPV4.match(core):
        return ""
    if not any(char.isdigit() for char in core):
        return None
    if _VERSION.match(core) or not (_HOSTLIKE.match(core) or _DOTTED_HOST.match(core)):
        return None
    head = core.split(".", 1)[0].split(":", 1)[0]
    if not any(char.isdigit() for char in head):
        # "metrics.k8s.io" is an API group: a host's number is in its own name.
        return None
    segments = head.split("-")
    name: list[str] = []
    for segment in segments:
        if any(char.isdigit() for char in segment):
            break
        name.append(segment)
    if len(name) == len(segments) and "." not in core:
        # Every segment is a word and the digits sit in a domain part only: not a host name.
        return None
    if name and all(segment.isupper() for segment in name):
        # "HTTP-01", "SEV-1", "CVE-2024-1234": an identifier, not a numbered host.
        return None
    if len(name) == 1 and name[0].lower() in _PLACE_WORDS:
        return ""  # "worker-3", "ip-10-0-3-14": a place, no workload
    if len(name) > 1 and name[-1].lower() == "ip":
        name.pop()  # "etcd-ip-10-0-1-5": etcd on the host at that address
    return "-".join(name)


def _soon_is_urgency(tokens: list[str], index: int) -> bool:
    token = tokens[index]
    previous = tokens[index - 1].lower().strip(_EDGE) if index else ""
    before = tokens[index - 2].lower() if index > 1 else ""
    if previous in _DEGREE or previous in _BE or (before in _BE and previous in _PRONOUNS):
        # "how fast", "too slow, not fast", "is it fast?": speed is what is asked.
        return False
    if token[-1:] in ",.!?;:":
        return True
    # What follows up to the end of the line is more urgency, or nothing: "fix it fast pls".
    rest = [t.strip(_EDGE).rstrip(_TRAILING) for t in tokens[index + 1 :]]
    if all(t in _SHOUTS or t.lower() in _HURRY or not t.strip("!") for t in rest):
        return True
    return rest[0].lower() in _WH
