"""A debater's stance as the record states it: its ``Stance:`` line, unless that only restates the question."""

from __future__ import annotations

from debatecode.protocol.design.records import Position
from debatecode.protocol.design.replies import parse_speech
from debatecode.protocol.design.run import DesignRun
from debatecode.protocol.design.words import ascii_words

__all__ = ["active_final", "restates", "stance_of"]


def stance_of(run: DesignRun, speech: Position) -> str:
    """The speech's stance, unless it only restates the question (small models do): then its first reason, if any."""
    parsed = parse_speech(speech.text, run.state.names(), own=speech.perspective)
    stance = parsed.stance or speech.text[:200]
    if restates(stance, run.state.question.text):
        return next((r for r in parsed.reasons if not restates(r, run.state.question.text)), "")
    return stance


def restates(text: str, question: str) -> bool:
    """Mostly the question's own words, and most of them (a short stance picking one option does not count)."""
    words = {w for w in ascii_words(text) if len(w) > 2}
    asked = {w for w in ascii_words(question) if len(w) > 2}
    return bool(words and asked) and len(words & asked) / len(words | asked) >= 0.6


def active_final(run: DesignRun) -> dict[str, Position]:
    """Each perspective's latest speech, without the perspectives muted for going off topic."""
    from debatecode.protocol.design.gate import muted_perspectives

    muted = muted_perspectives(run.state.rounds)
    return {key: speech for key, speech in run.state.latest().items() if key not in muted}
