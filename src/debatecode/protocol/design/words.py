"""The words of a speech, as the design debate's text measures count them.

``split_words`` and ``strip_suffix`` serve the gate reviewer (``gate.py``: repetition, off-topic
judging) and the grouping of final stances (``alternatives.py``); each keeps its own stop words
and stemming rules on top. ``ascii_words`` serves the near-duplicate checks of record items
(``sections.similar``) and of a stance against the question (``stances.restates``).

The two splitters differ on purpose and are kept apart so that no measure changes: ``split_words``
keeps letters of any script and joins "we're" into one word; ``ascii_words`` keeps ASCII letters
and digits only and splits at every other character.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["ascii_words", "split_words", "strip_suffix"]

_WORD = re.compile(r"[^\W_]+")
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def split_words(text: str) -> list[str]:
    """Lower-cased words, punctuation stripped; apostrophes (straight or curly) vanish, so "we're" is one word."""
    return _WORD.findall(text.lower().replace("'", "").replace("\u2019", ""))


def ascii_words(text: str) -> list[str]:
    """Lower-cased runs of ASCII letters and digits; everything else separates words."""
    return _ASCII_WORD.findall(text.lower())


def strip_suffix(word: str, suffixes: Sequence[str]) -> str:
    """``word`` with the first of ``suffixes`` it ends with taken off ("ies"/"ied" become "y").

    A suffix is taken off only when at least three letters stay, and a plural "s" never off "ss".
    """
    for suffix in suffixes:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not (suffix == "s" and word.endswith("ss")):
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word
