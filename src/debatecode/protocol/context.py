"""What each agent sees, how much it may say, and whether the debate is moving.

- ``SatisfactionTracker``: per-agent satisfaction scores (0-100) per round;
  consensus when everyone reaches the target, stalemate when the average
  stops rising.
- ``ContextWindow``: the history an agent is shown. Rounds 1-3 see every
  earlier round verbatim; rounds 4-7 the last 2 verbatim plus a summary of the
  rest; rounds 8+ the last 1 verbatim plus the score trajectory and the open
  blocking concerns. The summary is extractive and deterministic unless a
  ``summarizer`` callable is plugged in.
- ``TokenAllowance``: a per-agent, per-round token budget.
- ``is_rubber_stamp`` and ``repetition_ratio``: replies that approve without
  reasoning, or repeat the previous round.

Pure Python: nothing here calls a model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "REPETITION_THRESHOLD",
    "ContextView",
    "ContextWindow",
    "RoundBudgetExceeded",
    "RoundScores",
    "RoundTranscript",
    "SatisfactionTracker",
    "TokenAllowance",
    "TranscriptEntry",
    "estimate_tokens",
    "is_repetitive",
    "is_rubber_stamp",
    "repetition_ratio",
]

REPETITION_THRESHOLD = 0.6
"""A reply whose ``repetition_ratio`` to the previous one exceeds this is repetitive."""


def estimate_tokens(text: str) -> int:
    """Rough token count: one token per 4 characters, rounded up (about right for English and code)."""
    return math.ceil(len(text) / 4)


# -- satisfaction and progress -------------------------------------------------------------------


@dataclass(frozen=True)
class RoundScores:
    """Every agent's latest satisfaction score as of the end of one round."""

    round_no: int
    scores: dict[str, int]

    @property
    def average(self) -> float:
        """Mean score (0.0 when nobody has scored)."""
        return sum(self.scores.values()) / len(self.scores) if self.scores else 0.0


class SatisfactionTracker:
    """Satisfaction per round, consensus and stalemate.

    ``record`` carries scores over: an agent that did not score in a round
    keeps its previous score, as in the N-agent loop.

    Raises:
        ValueError: from the constructor, when ``target`` is outside 0-100,
            ``min_progress`` is negative or ``window`` is below 2.
    """

    def __init__(self, target: int = 90, min_progress: float = 5, window: int = 3) -> None:
        if not 0 <= target <= 100:
            raise ValueError(f"target must be between 0 and 100, got {target}")
        if min_progress < 0:
            raise ValueError(f"min_progress must not be negative, got {min_progress}")
        if window < 2:
            raise ValueError(f"window must be at least 2 rounds, got {window}")
        self.target = target
        self.min_progress = min_progress
        self.window = window
        self._history: list[RoundScores] = []

    @property
    def history(self) -> list[RoundScores]:
        """Recorded rounds, oldest first."""
        return list(self._history)

    @property
    def latest(self) -> dict[str, int]:
        """The newest scores (empty before the first round)."""
        return dict(self._history[-1].scores) if self._history else {}

    def record(self, round_no: int, scores: dict[str, int]) -> None:
        """Record the scores given in ``round_no``.

        Raises:
            ValueError: ``round_no`` is not after the last recorded round, or a score is outside 0-100.
        """
        if self._history and round_no <= self._history[-1].round_no:
            raise ValueError(f"round {round_no} is not after round {self._history[-1].round_no}")
        bad = {agent: score for agent, score in scores.items() if not 0 <= score <= 100}
        if bad:
            raise ValueError(f"satisfaction scores must be 0-100: {bad}")
        self._history.append(RoundScores(round_no, {**self.latest, **scores}))

    def consensus(self) -> bool:
        """Every agent's latest score is at least ``target`` (False before any score)."""
        latest = self.latest
        return bool(latest) and all(score >= self.target for score in latest.values())

    def blocking(self) -> list[str]:
        """Agents whose latest score is below ``target``."""
        return [agent for agent, score in self.latest.items() if score < self.target]

    def is_progressing(self) -> bool:
        """Over the last ``window`` rounds the average rose by at least ``min_progress`` (True with fewer rounds)."""
        if len(self._history) < self.window:
            return True
        recent = self._history[-self.window :]
        return recent[-1].average - recent[0].average >= self.min_progress

    def stalemate(self, round_no: int) -> bool:
        """After round 3, the debate is not progressing."""
        return round_no > 3 and not self.is_progressing()


# -- the context window --------------------------------------------------------------------------


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

    def render(self) -> str:
        """The round verbatim, as markdown."""
        parts = [f"### Round {self.round_no}"]
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


_CODE_BLOCK = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t].*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BLOCKING = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?\**blocking concerns?\b.*$", re.IGNORECASE | re.MULTILINE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(.+)$")


def _prose(text: str) -> str:
    """``text`` without code blocks and heading lines."""
    return _HEADING.sub(" ", _CODE_BLOCK.sub(" ", text))


def _clip(text: str, limit: int, *, flatten: bool = True) -> str:
    """``text`` cut at ``limit`` characters with an ellipsis; whitespace collapsed unless ``flatten`` is off."""
    if flatten:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def _first_sentences(text: str, count: int, limit: int) -> str:
    flat = " ".join(_LIST_ITEM.sub(r"\1", line) for line in _prose(text).splitlines()).strip()
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
    rounds move into the summary while the verbatim part is estimated above
    that many tokens (at least one round stays verbatim).

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
    ) -> None:
        if min(sentences, entry_chars, summary_chars, token_limit or 1) < 1:
            raise ValueError("sentences, entry_chars, summary_chars and token_limit must be at least 1")
        self.target = target
        self.summarizer = summarizer
        self.sentences = sentences
        self.entry_chars = entry_chars
        self.summary_chars = summary_chars
        self.token_limit = token_limit
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
        self._rounds.append(RoundTranscript(len(self._rounds) + 1, rows))

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

    @staticmethod
    def _tokens(rounds: Sequence[RoundTranscript]) -> int:
        return sum(estimate_tokens(r.render()) for r in rounds)

    def _per_round(self, rounds: Sequence[RoundTranscript]) -> str:
        lines = ["Early rounds summary:"]
        for r in rounds:
            scores = _scores(r.entries)
            lines.append(f"- Round {r.round_no}" + (f" (scores: {scores})" if scores else "") + ":")
            for e in r.entries:
                lines.append(f"  - {e.agent} ({e.role}): {_first_sentences(e.text, self.sentences, self.entry_chars)}")
        return "\n".join(lines)

    def _trajectory(self, older: Sequence[RoundTranscript], history: Sequence[RoundTranscript]) -> str:
        lines = ["Convergence trajectory (average satisfaction per round):"]
        for r in older:
            scored = [e.score for e in r.entries if e.score is not None]
            average = f"{sum(scored) / len(scored):.1f}" if scored else "n/a"
            lines.append(f"- Round {r.round_no}: average {average}" + (f" ({_scores(r.entries)})" if scored else ""))
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


# -- per-round token budget ----------------------------------------------------------------------


class RoundBudgetExceeded(Exception):
    """An agent spent more than its per-round token allowance.

    Deliberately not a ``DebatecodeError``: it is local to this module and the
    engine converts it (for example into a truncated turn or a ``RunError``).
    """

    def __init__(self, agent: str, round_no: int, spent: int, allowance: int) -> None:
        super().__init__(f"{agent} spent {spent} tokens in round {round_no}; the per-round allowance is {allowance}")
        self.agent = agent
        self.round_no = round_no
        self.spent = spent
        self.allowance = allowance


class TokenAllowance:
    """Tokens per agent per round; ``per_round=None`` means unlimited.

    Raises:
        ValueError: from the constructor, when ``per_round`` is below 1.
    """

    def __init__(self, per_round: int | None) -> None:
        if per_round is not None and per_round < 1:
            raise ValueError(f"per_round must be at least 1 (or None), got {per_round}")
        self.per_round = per_round
        self._spent: dict[tuple[str, int], int] = {}

    def spent(self, agent: str, round_no: int) -> int:
        """Tokens charged to ``agent`` in ``round_no`` so far."""
        return self._spent.get((agent, round_no), 0)

    def charge(self, agent: str, round_no: int, tokens: int) -> None:
        """Charge tokens already spent; they are recorded even when this raises.

        Raises:
            ValueError: ``tokens`` is negative.
            RoundBudgetExceeded: the agent's total for the round is now above ``per_round``.
        """
        if tokens < 0:
            raise ValueError(f"tokens must not be negative, got {tokens}")
        total = self._spent[agent, round_no] = self.spent(agent, round_no) + tokens
        if self.per_round is not None and total > self.per_round:
            raise RoundBudgetExceeded(agent, round_no, total, self.per_round)

    def remaining(self, agent: str, round_no: int) -> int | None:
        """Tokens ``agent`` may still spend in ``round_no`` (never below 0); ``None`` when unlimited."""
        if self.per_round is None:
            return None
        return max(self.per_round - self.spent(agent, round_no), 0)


# -- reply quality -------------------------------------------------------------------------------

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
    if any(_has_code(match.group(0)) for match in _CODE_BLOCK.finditer(text)):
        return False
    prose = _SCORE_LINE.sub(" ", _prose(text))
    words = _WORD.findall(prose.lower())
    if not words:
        return True
    content = [w for w in words if w not in _APPROVAL and w not in _FILLER and not _MARKERS.fullmatch(w)]
    if _MARKERS.search(prose):
        return len(content) < 2
    return len(words) < _MIN_WORDS or len(content) < _MIN_CONTENT


def _units(text: str) -> list[str]:
    units = []
    for line in text.splitlines():
        for sentence in _SENTENCE_END.split(line):
            unit = " ".join(sentence.lower().split()).strip(" .!?;:,-*#>")
            if unit:
                units.append(unit)
    return units


def repetition_ratio(previous: str, current: str) -> float:
    """Share of ``current``'s sentences (and lines) that already appear in ``previous``, 0.0-1.0.

    Comparison ignores case, spacing and surrounding punctuation. An empty
    ``current`` gives 0.0. Above ``REPETITION_THRESHOLD`` (0.6) the reply is
    repetitive.
    """
    units = _units(current)
    if not units:
        return 0.0
    seen = set(_units(previous))
    return sum(unit in seen for unit in units) / len(units)


def is_repetitive(previous: str, current: str, threshold: float = REPETITION_THRESHOLD) -> bool:
    """``repetition_ratio(previous, current) > threshold``."""
    return repetition_ratio(previous, current) > threshold
