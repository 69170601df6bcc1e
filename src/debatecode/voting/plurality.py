"""Plurality: the candidate with the most first preferences wins."""

from __future__ import annotations

from debatecode.voting.base import Ballot, VoteResult, VotingMethod, candidate_order, clean_ranking, earliest_leader

__all__ = ["Plurality"]


class Plurality(VotingMethod):
    """Most first-place votes wins; ties go to the earliest candidate.

    Only a ballot's first known candidate counts; the rest of the ranking is ignored.
    """

    name = "plurality"

    def tally(self, candidates: list[str], ballots: list[Ballot]) -> VoteResult:
        """Count first choices.

        Raises:
            ValueError: ``candidates`` is empty.
        """
        order = candidate_order(candidates, self.name)
        counts: dict[str, float] = dict.fromkeys(order, 0.0)
        abstentions = 0
        for ballot in ballots:
            ranking = clean_ranking(ballot, counts)
            if ranking:
                counts[ranking[0]] += 1
            else:
                abstentions += 1
        winner, tie_broken = earliest_leader(order, counts)
        return VoteResult(
            method=self.name, winner=winner, tallies=counts, tie_broken=tie_broken, abstentions=abstentions
        )
