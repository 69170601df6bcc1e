"""One walk over code-like text that skips string literals and counts brackets.

Example text, expected values and function headers are read character by character to find a
closing bracket, a top-level ``=``, ``#`` or ``:``, or the end of a value. Every such reader
must step over string literals (a ``)`` inside ``"a)"`` closes nothing) and keep a bracket depth;
``CodeScan`` does both once, and each reader keeps only what it looks for.

Two rules read a string literal, chosen by ``python_literals``:

- ``True``: as Python writes it: backslash escapes, triple quotes, and a single-quoted literal
  that closes on its own line (an apostrophe in prose, ``user's``, is then no string).
- ``False``: a quote runs to the next same quote, whatever lies between (no escapes, no line
  rule): the plainer reading of expected values and of a ``def`` header.

A literal that does not close ends the walk (``unclosed`` is set, ``end`` is its quote).
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["CLOSERS", "OPENERS", "CodeScan", "string_end"]

OPENERS = "([{"
CLOSERS = ")]}"
_QUOTES = "'\""
_MAX_TRIPLE = 4000
"""Characters searched for the end of a triple-quoted literal: example text is short."""


def string_end(text: str, start: int, *, python_literals: bool = True) -> int | None:
    """Index just past the string literal opening at ``text[start]``; ``None`` when it is not closed.

    With ``python_literals`` a single-quoted literal must close on its own line and a backslash
    escapes the next character; without, the literal ends at the next same quote.
    """
    quote = text[start]
    if not python_literals:
        close = text.find(quote, start + 1)
        return None if close < 0 else close + 1
    if text.startswith(quote * 3, start):
        close = text.find(quote * 3, start + 3, start + _MAX_TRIPLE)
        return None if close < 0 else close + 3
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index + 1
        if char == "\n":
            return None
        index += 1
    return None


class CodeScan:
    """The characters of ``text`` from ``start`` outside string literals, each with its bracket depth.

    Iterating yields ``(index, char, depth)``. ``depth`` counts the brackets open around the
    character; an opening bracket and its closing one both carry the depth outside them, so an
    unmatched closing bracket carries ``-1`` (the count goes on below zero; brackets of different
    kinds are not paired). The walk stops before ``stop`` (default: the end of ``text``; a literal
    that starts before ``stop`` is still read whole), or at a literal that does not close.

    After the walk (or a ``break``), ``depth`` is the count so far; when the walk ran out, ``end``
    is where it stopped (past the last literal read, ``stop``, or an unclosed literal's quote) and
    ``unclosed`` says whether that literal stopped it.
    """

    def __init__(self, text: str, start: int = 0, stop: int | None = None, *, python_literals: bool) -> None:
        self.text = text
        self.start = start
        self.stop = len(text) if stop is None else min(len(text), stop)
        self.python_literals = python_literals
        self.depth = 0
        self.end = start
        self.unclosed = False

    def __iter__(self) -> Iterator[tuple[int, str, int]]:
        text = self.text
        index = self.start
        while index < self.stop:
            char = text[index]
            if char in _QUOTES:
                after = string_end(text, index, python_literals=self.python_literals)
                if after is None:
                    self.unclosed = True
                    break
                index = after
                continue
            if char in OPENERS:
                yield index, char, self.depth
                self.depth += 1
            elif char in CLOSERS:
                self.depth -= 1
                yield index, char, self.depth
            else:
                yield index, char, self.depth
            index += 1
        self.end = index
