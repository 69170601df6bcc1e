"""Replies that approve without reasoning ("looks good", "LGTM", "+1, ship it")."""

from __future__ import annotations

import re

from debatecode.protocol.transcript import CODE_BLOCK, prose

__all__ = ["is_rubber_stamp"]

_MARKERS = re.compile(
    r"\b(?:because|since|so|however|but|although|though|therefore|thus|otherwise|unless|whereas|risks?|risky"
    r"|fails?|failing|failed|breaks?|broken|edge[ -]cases?|bugs?|crash\w*|overflow\w*|missing|incorrect|wrong"
    r"|instead|if|when)\b",
    re.IGNORECASE,
)
_SCORE_LINE = re.compile(
    r"^[ \t]*\**(?:satisfaction(?:[ \t]+score)?|score|confidence)\**[ \t]*[:=]?[ \t]*\d+(?:[ \t]*(?:%|/[ \t]*100))?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"[a-z0-9+']+")


def _word_set(words: str) -> frozenset[str]:
    # Word lists as one string: a list literal would put one word per line after formatting.
    return frozenset(words.split())


_APPROVAL = _word_set(
    "lgtm looks look looking good great fine ok okay nice perfect excellent solid clean readable elegant awesome "
    "neat beautiful impressive correct approve approved approval agree agreed +1 ship it yes sounds works well done "
    "job work love like thanks thank you team everyone all no issues issue concerns concern problems problem "
    "changes needed fully totally completely really very overall seems seem right"
)
_FILLER = _word_set(
    "a an the this that these those it its i i'm me my we our us to for of on in with and or is are was be been "
    "has have had do does from as at by solution code implementation proposal version here there now"
)
_MIN_WORDS = 12
_MIN_CONTENT = 4


def _has_code(block: str) -> bool:
    """Whether a fenced block has a non-blank line between its fences."""
    return any(line.strip() for line in block.splitlines()[1:] if not line.strip().startswith(("```", "~~~")))


def is_rubber_stamp(text: str) -> bool:
    """Whether a reply approves without reasoning ("looks good", "LGTM", "+1, ship it").

    Code blocks, headings and score lines are set aside first; a reply that
    carries code is never a rubber stamp. What remains is a rubber stamp when
    it is empty, or when its content words (those that are neither approval
    nor filler words) are too few: fewer than 2 if it uses a reasoning marker
    (because, since, so, however, but, risk, fails, edge case, ...), otherwise
    fewer than 4, or the reply is shorter than 12 words.
    """
    if any(_has_code(match.group(0)) for match in CODE_BLOCK.finditer(text)):
        return False
    remaining = _SCORE_LINE.sub(" ", prose(text))
    words = _WORD.findall(remaining.lower())
    if not words:
        return True
    content = [w for w in words if w not in _APPROVAL and w not in _FILLER and not _MARKERS.fullmatch(w)]
    if _MARKERS.search(remaining):
        return len(content) < 2
    return len(words) < _MIN_WORDS or len(content) < _MIN_CONTENT
