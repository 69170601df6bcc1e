"""The history an agent is shown: per-round transcripts and the window over them.

Rounds 1-3 see every earlier round verbatim; rounds 4-7 the last 2 verbatim
plus a summary of the rest; rounds 8+ the last 1 verbatim plus the score
trajectory and the open blocking concerns. The summary is extractive and
deterministic unless a ``summarizer`` callable is plugged in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from debatecode.llm.tokens import count_tokens
from debatecode.llm.types import estimate_tokens

__all__ = ["CODE_BLOCK", "ContextView", "ContextWindow", "RoundTranscript", "TranscriptEntry", "prose"]


class TranscriptEntry(NamedTuple):
    """One agent's reply in one round."""

    agent: str
    role: str
    text: str
    score: int | None = None


@dataclass(frozen=True)
class RoundTranscript:
    """One round's replies."""

    round_no: int
    entries: tuple[TranscriptEntry, ...]
    label: str = ""
    """How headings and summaries name the round (default ``Round <round_no>``)."""

    @property
    def title(self) -> str:
        return self.label or f"Round {self.round_no}"

    def render(self) -> str:
        """The round verbatim, as markdown."""
        parts = [f"### {self.title}"]
        for e in self.entries:
            score = f" (satisfaction {e.score})" if e.score is not None else ""
            parts.append(f"#### {e.agent} ({e.role}){score}\n{e.text.strip()}")
        return "\n\n".join(parts)


@dataclass(frozen=True)
class ContextView:
    """What an agent is shown of the history: recent rounds verbatim, older ones summarised."""

    verbatim_rounds: tuple[RoundTranscript, ...]
    summary_text: str
    summarized_rounds: tuple[int, ...] = ()

    def render(self) -> str:
        """Markdown with ``## Recent History`` and ``## Earlier Rounds Summary`` sections (empty ones left out)."""
        parts = []
        if self.verbatim_rounds:
            parts.append("## Recent History\n\n" + "\n\n".join(r.render() for r in self.verbatim_rounds))
        if self.summary_text:
            parts.append("## Earlier Rounds Summary\n\n" + self.summary_text)
        return "\n\n".join(parts)


CODE_BLOCK = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t].*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BLOCKING = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?\**blocking concerns?\b.*$", re.IGNORECASE | re.MULTILINE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(.+)$")


def prose(text: str) -> str:
    """``text`` without code blocks and heading lines."""
    return _HEADING.sub(" ", CODE_BLOCK.sub(" ", text))


def _clip(text: str, limit: int, *, flatten: bool = True) -> str:
    """``text`` cut at ``limit`` characters with an ellipsis; whitespace collapsed unless ``flatten`` is off."""
    if flatten:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def _first_sentences(text: str, count: int, limit: int) -> str:
    flat = " ".join(_LIST_ITEM.sub(r"\1", line) for line in prose(text).splitlines()).strip()
    return _clip(" ".join(_SENTENCE_END.split(flat)[:count]), limit) or "(no prose)"


def _blocking_concerns(text: str, limit: int) -> str:
    """The items under a "Blocking concerns" heading, else the first sentence."""
    match = _BLOCKING.search(text)
    if match:
        items = []
        for line in text[match.end() :].splitlines():
            if _HEADING.match(line):
                break
            item = _LIST_ITEM.match(line)
            if item:
                items.append(item.group(1).strip())
        if items:
            return _clip("; ".join(items), limit)
    return _first_sentences(text, 1, limit)


def _scores(entries: Sequence[TranscriptEntry]) -> str:
    return ", ".join(f"{e.agent}={e.score}" for e in entries if e.score is not None)


class ContextWindow:
    """Per-round transcripts and the view of them each round gets.

    ``build(round_no)`` looks at the rounds before ``round_no``. The summary is
    extractive: per summarised round, each agent's first ``sentences``
    sentence(s) of prose (code and headings skipped), cut at ``entry_chars``,
    with the round's scores; from round 8 on, the per-round average score
    trajectory plus, for every agent whose latest score is below ``target``,
    its blocking concerns (the list under a "Blocking concerns" heading, else
    its first sentence). The whole summary is cut at ``summary_chars``.

    With ``summarizer``, the summary is instead ``summarizer(text)`` (also cut
    at ``summary_chars``), where ``text`` is the summarised rounds rendered
    verbatim; its exceptions propagate. With ``token_limit``, older verbatim
    rounds move into the summary while the verbatim part is above that many
    tokens (at least one round stays verbatim): counted by ``model``'s own
    tokenizer (``llm.tokens.count_tokens``) when a model is given, else
    estimated as characters / 4. With ``label``, round ``n`` is called
    ``label(n)`` in headings and summaries (a design debate's first stored
    round is its independent positions, so its response round 1 is stored
    second).

    Raises:
        ValueError: from the constructor, when a limit is below 1.
    """

    def __init__(
        self,
        rounds: Sequence[Sequence[tuple[str, str, str, int | None]]] = (),
        *,
        target: int = 90,
        summarizer: Callable[[str], str] | None = None,
        sentences: int = 1,
        entry_chars: int = 160,
        summary_chars: int = 4000,
        token_limit: int | None = None,
        model: str | None = None,
        label: Callable[[int], str] | None = None,
    ) -> None:
        if min(sentences, entry_chars, summary_chars, token_limit or 1) < 1:
            raise ValueError("sentences, entry_chars, summary_chars and token_limit must be at least 1")
        self.target = target
        self.summarizer = summarizer
        self.sentences = sentences
        self.entry_chars = entry_chars
        self.summary_chars = summary_chars
        self.token_limit = token_limit
        self.model = model
        self.label = label
        self._rounds: list[RoundTranscript] = []
        for entries in rounds:
            self.add_round(entries)

    @property
    def rounds(self) -> list[RoundTranscript]:
        """Every stored round, oldest first (round numbers start at 1)."""
        return list(self._rounds)

    def add_round(self, entries: Sequence[tuple[str, str, str, int | None]]) -> None:
        """Store the next round's ``(agent, role, text, score)`` replies."""
        rows = tuple(TranscriptEntry(*entry) for entry in entries)
        number = len(self._rounds) + 1
        self._rounds.append(RoundTranscript(number, rows, self.label(number) if self.label else ""))

    @staticmethod
    def verbatim_count(round_no: int) -> int | None:
        """Earlier rounds shown verbatim in ``round_no``: all (``None``) up to 3, 2 for 4-7, 1 from 8."""
        if round_no <= 3:
            return None
        return 2 if round_no <= 7 else 1

    def build(self, round_no: int) -> ContextView:
        """The view for ``round_no``.

        Raises:
            ValueError: ``round_no`` is below 1.
        """
        if round_no < 1:
            raise ValueError(f"rounds are numbered from 1, got {round_no}")
        history = self._rounds[: round_no - 1]
        keep = self.verbatim_count(round_no)
        cut = 0 if keep is None else max(len(history) - keep, 0)
        if self.token_limit is not None:
            while len(history) - cut > 1 and self._tokens(history[cut:]) > self.token_limit:
                cut += 1
        older, recent = history[:cut], history[cut:]
        if not older:
            return ContextView(tuple(recent), "")
        if self.summarizer is not None:
            summary = self.summarizer("\n\n".join(r.render() for r in older))
        elif round_no >= 8:
            summary = self._trajectory(older, history)
        else:
            summary = self._per_round(older)
        return ContextView(
            tuple(recent), _clip(summary, self.summary_chars, flatten=False), tuple(r.round_no for r in older)
        )

    def _tokens(self, rounds: Sequence[RoundTranscript]) -> int:
        model = self.model
        if model is None:
            return sum(estimate_tokens(r.render()) for r in rounds)
        return count_tokens(model, "\n\n".join(r.render() for r in rounds))

    def _per_round(self, rounds: Sequence[RoundTranscript]) -> str:
        lines = ["Early rounds summary:"]
        for r in rounds:
            scores = _scores(r.entries)
            lines.append(f"- {r.title}" + (f" (scores: {scores})" if scores else "") + ":")
            for e in r.entries:
                lines.append(f"  - {e.agent} ({e.role}): {_first_sentences(e.text, self.sentences, self.entry_chars)}")
        return "\n".join(lines)

    def _trajectory(self, older: Sequence[RoundTranscript], history: Sequence[RoundTranscript]) -> str:
        lines = ["Convergence trajectory (average satisfaction per round):"]
        for r in older:
            scored = [e.score for e in r.entries if e.score is not None]
            average = f"{sum(scored) / len(scored):.1f}" if scored else "n/a"
            lines.append(f"- {r.title}: average {average}" + (f" ({_scores(r.entries)})" if scored else ""))
        latest: dict[str, tuple[int, TranscriptEntry]] = {}
        for r in history:
            for e in r.entries:
                if e.score is not None:
                    latest[e.agent] = (r.round_no, e)
        blocking = [(n, e) for n, e in latest.values() if e.score is not None and e.score < self.target]
        if blocking:
            lines.append(f"Blocking concerns (agents below {self.target}):")
            for n, e in blocking:
                concern = _blocking_concerns(e.text, self.entry_chars)
                lines.append(f"- {e.agent} ({e.role}, {e.score} in round {n}): {concern}")
        else:
            lines.append(f"No blocking concerns: every scoring agent is at or above {self.target}.")
        return "\n".join(lines)
