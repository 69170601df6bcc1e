"""The voting contract: ballots in, a deterministic result out."""

from __future__ import annotations

import abc

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Ballot", "VoteResult", "VotingMethod"]


class Ballot(BaseModel):
    """One voter's preference: candidate ids, most preferred first. Empty means abstain."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    voter: str
    ranking: list[str] = Field(default_factory=list)


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
