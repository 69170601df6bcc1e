"""The voting contract: ballots in, a deterministic result out.

Rules every method follows:

- Ties are broken by the order of ``candidates``: the earlier candidate wins
  and ``VoteResult.tie_broken`` is set.
- Ballot entries that are not candidates are ignored, and so is any repeat of
  a candidate on one ballot (its first position counts).
- A ballot left with no known candidate is an abstention.
- Rankings may be partial; each method documents how it treats the candidates
  a ballot leaves out.
- Only ``weighted`` reads ``Ballot.weight``; every other method counts each
  ballot once.
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Ballot", "VoteResult", "VotingMethod", "candidate_order", "clean_ranking", "earliest_leader"]


class Ballot(BaseModel):
    """One voter's preference: candidate ids, most preferred first. Empty means abstain."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    voter: str
    ranking: list[str] = Field(default_factory=list)
    weight: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    """How much the ballot counts in the ``weighted`` method; other methods ignore it."""


class VoteResult(BaseModel):
    """The winner and how the count went."""

    model_config = ConfigDict(extra="forbid")

    method: str
    winner: str
    tallies: dict[str, float]
    tie_broken: bool = False
    """True when the winner was picked by the deterministic tie-break."""
    abstentions: int = 0
    fallback_used: bool = False
    """True when the method could not decide and another one picked the winner (Condorcet without a Condorcet
    winner falls back to Borda; unanimous without consensus and weighted with zero total weight fall back to plurality)."""
    consensus_reached: bool = True
    """False only from ``unanimous`` when the first choices disagree (or nobody voted)."""
    disagreements: list[str] = Field(default_factory=list)
    """Without consensus: one line per voter whose first choice is not the winner, e.g. ``"b ranks y first"``."""


class VotingMethod(abc.ABC):
    """A way to turn ballots into one winner among ``candidates``.

    Ties are broken deterministically by the order of ``candidates``: the
    earlier candidate wins. Ballot entries that are not candidates are ignored.
    """

    name: str = "abstract"

    @abc.abstractmethod
    def tally(self, candidates: list[str], ballots: list[Ballot]) -> VoteResult:
        """Count the ballots.

        Raises:
            ValueError: ``candidates`` is empty.
        """


def candidate_order(candidates: Sequence[str], method: str) -> list[str]:
    """``candidates`` without repeats, in their given order (the tie-break order).

    Raises:
        ValueError: ``candidates`` is empty.
    """
    if not candidates:
        raise ValueError(f"{method} vote needs at least one candidate")
    return list(dict.fromkeys(candidates))


def clean_ranking(ballot: Ballot, known: Collection[str]) -> list[str]:
    """The ballot's ranking restricted to ``known`` candidates, first occurrence of each kept."""
    seen: dict[str, None] = {}
    for choice in ballot.ranking:
        if choice in known and choice not in seen:
            seen[choice] = None
    return list(seen)


def earliest_leader(candidates: Sequence[str], tallies: dict[str, float]) -> tuple[str, bool]:
    """The candidate with the highest tally, earliest on ties, and whether a tie was broken."""
    best = max(tallies[c] for c in candidates)
    leaders = [c for c in candidates if tallies[c] == best]
    return leaders[0], len(leaders) > 1
