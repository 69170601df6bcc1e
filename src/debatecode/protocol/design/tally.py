"""Which option each debater recommends, counted: the grounded part of "points of agreement".

A design question often names its options ("SQLite or PostgreSQL?"). Each
debater's final stance is read for the option it recommends: the first option
it names, unless one of the three words before it rejects it ("do not use X",
"instead of X", "over X", "rather than X"), in which case the next one named. The count — "3 of 4
perspectives recommend SQLite" — is what the debaters actually said, whatever
a small moderator model makes of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["question_options", "recommended_option", "tally_lines"]

_SEPARATOR = re.compile(r"\s*(?:,|\bor\b|\bvs\.?|\bversus\b)\s*", re.IGNORECASE)
_REJECTING = frozenset({"not", "no", "never", "instead", "over", "than", "against", "avoid", "without", "don't"})
_FILLER = {"a", "an", "the", "to", "use", "using", "in", "on", "with", "we", "should", "store", "keep", "choose"}


def question_options(question: str) -> list[str]:
    """The options a question names ("X or Y", "A, B or C"), as written; [] when it names none."""
    for sentence in re.split(r"[.?!;\n]", question):
        if not re.search(r"\b(?:or|vs\.?|versus)\b", sentence, re.IGNORECASE):
            continue
        head, _, tail = re.split(r"\b(or|vs\.?|versus)\b", sentence, maxsplit=1, flags=re.IGNORECASE)[0:3] + [""] * 0
        before = [p.strip() for p in re.split(r",", head)]
        last_before = _last_words(before[-1])
        listed = []
        if len(before) > 1:  # "A, B or C": the head ends with A, the middle parts are B...
            listed = [_last_words(before[0]), *(_last_words(p) for p in before[1:-1] if 0 < len(p.split()) <= 3)]
        after = re.split(r"\s+(?:for|in|to|as|when|if|because|on|with)\s+", tail.strip(), maxsplit=1)[0]
        first_after = _first_words(after)
        options = [o for o in [*listed, last_before, first_after] if o]
        if len(options) >= 2:
            return options
    return []


def _last_words(text: str) -> str:
    words = [w for w in re.findall(r"[\w.+#-]+", text) if w.lower() not in _FILLER]
    capitalised = [w for w in words if w[:1].isupper() or any(c.isdigit() for c in w)]
    return (capitalised or words)[-1] if words else ""


def _first_words(text: str) -> str:
    words = [w for w in re.findall(r"[\w.+#-]+", text) if w.lower() not in _FILLER]
    return words[0] if words else ""


def recommended_option(stance: str, options: Sequence[str]) -> str | None:
    """The option ``stance`` recommends: the first it names, or the other when the sentence rejects the first."""
    first_sentence = re.split(r"(?<=[.!?])\s+", stance.strip(), maxsplit=1)[0].lower()
    found = sorted(
        (match.start(), option)
        for option in options
        if (match := re.search(r"(?<![\w-])" + re.escape(option.lower()) + r"(?![\w-])", first_sentence))
    )
    if not found:
        return None
    position, option = found[0]
    before = re.findall(r"[\w']+", first_sentence[:position])[-3:]
    if _REJECTING & set(before):
        others = [o for _, o in found[1:]] or [o for o in options if o != option]
        return others[0] if len(others) == 1 or found[1:] else None
    return option


def tally_lines(options: Sequence[str], stances: Mapping[str, str]) -> list[str]:
    """ "k of n perspectives recommend X: A, B." lines, most supported option first; [] without options."""
    if len(options) < 2 or not stances:
        return []
    picks: dict[str, list[str]] = {}
    undecided: list[str] = []
    for name, stance in stances.items():
        option = recommended_option(stance, options) if stance else None
        if option is None:
            undecided.append(name)
        else:
            picks.setdefault(option, []).append(name)
    total = len(stances)
    lines = [
        f"{len(names)} of {total} perspectives recommend {option}: {', '.join(names)}."
        for option, names in sorted(picks.items(), key=lambda item: -len(item[1]))
    ]
    if undecided:
        lines.append(f"No clear pick between {' and '.join(options)}: {', '.join(undecided)}.")
    return lines
