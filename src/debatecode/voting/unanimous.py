"""Unanimous: every voter's first choice must be the same candidate."""

from __future__ import annotations

from debatecode.voting.base import Ballot, VoteResult, VotingMethod, candidate_order, clean_ranking
from debatecode.voting.plurality import Plurality

__all__ = ["Unanimous"]


class Unanimous(VotingMethod):
    """All first choices agree → that candidate wins with ``consensus_reached=True``.

    Abstentions do not break unanimity, but at least one voter must vote.
    Without consensus the result still names a winner so callers always have
    a candidate: the plurality leader (earliest on ties), with
    ``consensus_reached=False``, ``fallback_used=True`` and one line in
    ``disagreements`` per voter whose first choice is not that leader.
    ``tallies`` holds the first-choice counts in both cases.
    """

    name = "unanimous"

    def tally(self, candidates: list[str], ballots: list[Ballot]) -> VoteResult:
        """Check for unanimity.

        Raises:
            ValueError: ``candidates`` is empty.
        """
        order = candidate_order(candidates, self.name)
        plurality = Plurality().tally(order, ballots)
        firsts = [(ballot.voter, ranking[0]) for ballot in ballots if (ranking := clean_ranking(ballot, order))]
        choices = {choice for _, choice in firsts}
        if len(choices) == 1:
            return plurality.model_copy(update={"method": self.name, "tie_broken": False})
        disagreements = [f"{voter} ranks {choice} first" for voter, choice in firsts if choice != plurality.winner]
        return plurality.model_copy(
            update={
                "method": self.name,
                "consensus_reached": False,
                "fallback_used": True,
                "disagreements": disagreements,
            }
        )
