"""The real alternatives of a debate: the debaters' final stances grouped by what they recommend.

Two debaters holding the same position ("add Redis in front of PostgreSQL",
"use Redis as a cache for PostgreSQL") are one alternative; the one arguing
"keep everything in PostgreSQL, no Redis" is another. An escalation offers
one option per alternative, so no side of a split debate goes unheard.

Stances are compared by what they *recommend*:

- when the question names its options ("Redis or PostgreSQL?") and two
  stances pick different ones (``tally.recommended_option``), they are
  different alternatives, whatever words they share;
- otherwise by their recommendation words: the content words of the
  stance's first sentence, stemmed, with the words the stance rejects left
  out ("no Redis", "instead of Kafka", "rather than a queue", "without
  Redis"). Words every stance uses (the subject of the question, say
  "PostgreSQL" when all of them mention it) tell no position apart and are
  set aside; two stances are one position when the words they share make up
  at least ``SAME_POSITION`` of the shorter one's (the overlap coefficient),
  and at least two words unless the shorter has at most two. Groups are
  formed transitively.

Lexical only, and deliberately so: it needs no model and says the same
thing on every run and every resume.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from debatecode.protocol.design.tally import question_options, recommended_option
from debatecode.protocol.design.words import split_words, strip_suffix

__all__ = ["SAME_POSITION", "Alternative", "group_stances", "recommendation_words"]

SAME_POSITION = 0.5
"""Overlap of recommendation words (see the module docstring) from which two stances are one position."""

_STOP_TEXT = """
    a about above after again all also am an and any are as at be because been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her here him his
    how i if in into is it its itself just me more most my nor now of off on once only or other our ours out own same
    she should so some such that the their them then there these they this those through to too under until up us very
    was we were what when where which while who whom why will with would you your yes think agree point still really
    well recommend recommends recommended recommending propose proposes suggest suggests go going want wants need
    needs must let lets use using used
"""
_STOP = frozenset(_STOP_TEXT.split())
"""Function words and the verbs of recommending: they say nothing about *what* is recommended."""

_REJECTING = re.compile(
    r"\b(?:instead\s+of|rather\s+than|other\s+than|not|no|never|without|avoid(?:ing)?|against|over|drop(?:ping)?|"
    r"skip(?:ping)?|don'?t|do\s+not|doesn'?t|shouldn'?t|won'?t)\b[^,;:.!?]*",
    re.IGNORECASE,
)
"""A rejecting word and what follows it up to the next punctuation: the part of a stance that is *not* recommended."""

_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "es", "ed", "ly", "s")


@dataclass(frozen=True)
class Alternative:
    """One position some debaters hold: its wording and who holds it."""

    stance: str
    """The wording of the most satisfied holder (the first to speak on a tie)."""
    holders: tuple[str, ...]
    """Perspective keys (or names: whatever keyed the stances), in speaking order."""
    pick: str | None = None
    """The option of the question it recommends, when the question names options and the stance picks one."""


def _first_sentence(stance: str) -> str:
    return re.split(r"(?<=[.!?])\s+", stance.strip(), maxsplit=1)[0]


def recommendation_words(stance: str) -> frozenset[str]:
    """The stemmed content words of what ``stance`` recommends (its first sentence, rejected parts removed)."""
    kept = _REJECTING.sub(" ", _first_sentence(stance).replace("\u2019", "'"))
    return frozenset(
        strip_suffix(w, _SUFFIXES) for w in split_words(kept) if w not in _STOP and not w.isdigit() and len(w) > 1
    )


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _same_words(a: frozenset[str], b: frozenset[str], common: frozenset[str]) -> bool:
    """Whether two stances' recommendation words say the same thing (see the module's docstring)."""
    if a == b:
        return True
    own_a, own_b = a - common, b - common
    if not own_a or not own_b:  # one says nothing beyond what every stance says
        return _jaccard(a, b) >= SAME_POSITION
    shared = own_a & own_b
    shorter = min(len(own_a), len(own_b))
    return len(shared) / shorter >= SAME_POSITION and (len(shared) >= 2 or shorter <= 2)


def group_stances(
    stances: Mapping[str, str], *, question: str = "", scores: Mapping[str, int | None] | None = None
) -> list[Alternative]:
    """The distinct positions among ``stances`` (holder → stance), most held first.

    Empty stances hold no position and are left out. Ties in the number of
    holders go to the group with the most satisfied holder, then to the
    earliest speaker. ``scores`` (holder → satisfaction) picks each group's
    wording; ``question`` gives the options a stance may pick.
    """
    scores = scores or {}
    order = [key for key, text in stances.items() if text and text.strip()]
    options = question_options(question) if question else []
    picks = {key: recommended_option(_first_sentence(stances[key]), options) if options else None for key in order}
    words = {key: recommendation_words(stances[key]) for key in order}
    common = frozenset.intersection(*words.values()) if len(words) > 1 else frozenset()
    parent = {key: key for key in order}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for i, first in enumerate(order):
        for second in order[i + 1 :]:
            a, b = picks[first], picks[second]
            same = a == b if a is not None and b is not None else _same_words(words[first], words[second], common)
            if same:
                parent[root(second)] = root(first)
    groups: dict[str, list[str]] = {}
    for key in order:
        groups.setdefault(root(key), []).append(key)

    def best(members: Sequence[str]) -> str:
        return max(members, key=lambda k: (scores.get(k) or 0, -order.index(k)))

    alternatives = [
        Alternative(
            stance=stances[best(members)].strip(),
            holders=tuple(members),
            pick=next((picks[m] for m in members if picks[m] is not None), None),
        )
        for members in groups.values()
    ]
    return sorted(
        alternatives,
        key=lambda alt: (
            -len(alt.holders),
            -max(scores.get(h) or 0 for h in alt.holders),
            order.index(alt.holders[0]),
        ),
    )
