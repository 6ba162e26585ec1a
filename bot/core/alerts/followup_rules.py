"""When a person's thread reply is a question to the bot: the words, whatever the surface.

A surface first drops its own mention markup and refuses replies addressed to someone else (a
mention of another person); what is left is a question when it has a question mark or starts
with a question word, and never when it only thanks or acknowledges.
"""

from __future__ import annotations

import re

_EMOJI_CODE = re.compile(r":[a-z0-9_+'-]+:")
_QUESTION_WORDS = frozenset(
    "what how why where when which who whom whose can could should would is are am was were "
    "do does did will shall may might has have any anything explain show tell give list".split()
)
# Whole messages that only thank or acknowledge, whatever their punctuation.
_ACKS = frozenset(
    "thanks thank you thx ty tysm cheers ok okay k kk cool great nice got it perfect awesome "
    "lgtm np sure yes yep yeah no nope done ack noted will do sounds good makes sense 👍 🙏 "
    "much a lot appreciated".split()
)


def reads_as_question(text: str) -> bool:
    """``text`` (mentions already removed) reads as a question, not a statement or thanks."""
    words = re.findall(r"[\w'’-]+", _EMOJI_CODE.sub(" ", text).lower())
    if not words or all(word in _ACKS for word in words):
        return False
    return "?" in text or words[0] in _QUESTION_WORDS
