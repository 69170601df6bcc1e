"""Satisfaction and progress: per-agent scores (0-100) per round.

Consensus when every agent reaches the target; stalemate when the average
stops rising over a window of rounds. Pure Python: nothing here calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RoundScores", "SatisfactionTracker"]


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
