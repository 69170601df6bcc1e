"""Plurality: the candidate with the most first preferences wins."""

from __future__ import annotations

from debatecode.voting.base import Ballot, VoteResult, VotingMethod

__all__ = ["Plurality"]


class Plurality(VotingMethod):
    """Most first-place votes wins; ties go to the earliest candidate."""

    name = "plurality"

    def tally(self, candidates: list[str], ballots: list[Ballot]) -> VoteResult:
        if not candidates:
            raise ValueError("plurality vote needs at least one candidate")
        counts: dict[str, float] = dict.fromkeys(candidates, 0.0)
        abstentions = 0
        for ballot in ballots:
            first = next((choice for choice in ballot.ranking if choice in counts), None)
            if first is None:
                abstentions += 1
            else:
                counts[first] += 1
        best = max(counts.values())
        leaders = [c for c in candidates if counts[c] == best]
        return VoteResult(
            method=self.name,
            winner=leaders[0],
            tallies=counts,
            tie_broken=len(leaders) > 1,
            abstentions=abstentions,
        )
