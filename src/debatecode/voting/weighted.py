"""Weighted: first choices count with the voter's weight.

Each ballot adds its ``weight`` to its first known candidate; the largest
weighted sum wins. The engine sets a voter's weight from how well the voter's
own candidate did (``voter_weight``), so agents whose code passes more tests
and scores better on quality count for more. With every weight at 1 this is
exactly plurality.

If no ballot carries any weight (all weights 0) the weighted sums cannot
decide, and the winner is the unweighted plurality leader with
``fallback_used=True``; ``tallies`` then holds the plain first-choice counts.
"""

from __future__ import annotations

import math

from debatecode.voting.base import Ballot, VoteResult, VotingMethod, candidate_order, clean_ranking, earliest_leader
from debatecode.voting.plurality import Plurality

__all__ = ["QUALITY_SHARE", "Weighted", "voter_weight"]

QUALITY_SHARE = 0.3
"""Share of a voter's weight that comes from code quality; the rest comes from the test pass rate."""


def voter_weight(pass_rate: float, quality: float, *, quality_share: float = QUALITY_SHARE) -> float:
    """A voter's weight from its own candidate: ``(1 - quality_share) * pass_rate + quality_share * quality``.

    Raises:
        ValueError: an argument is outside ``[0, 1]``.
    """
    for label, value in (("pass_rate", pass_rate), ("quality", quality), ("quality_share", quality_share)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{label} must be between 0 and 1, got {value!r}")
    return (1.0 - quality_share) * pass_rate + quality_share * quality


class Weighted(VotingMethod):
    """Weighted first-choice sums; ties go to the earliest candidate."""

    name = "weighted"

    def tally(self, candidates: list[str], ballots: list[Ballot]) -> VoteResult:
        """Sum ballot weights per first choice.

        Raises:
            ValueError: ``candidates`` is empty.
        """
        order = candidate_order(candidates, self.name)
        weights: dict[str, list[float]] = {c: [] for c in order}
        abstentions = 0
        for ballot in ballots:
            ranking = clean_ranking(ballot, weights)
            if ranking:
                weights[ranking[0]].append(ballot.weight)
            else:
                abstentions += 1
        # fsum is exact, so sums (and ties) do not depend on ballot order.
        sums = {c: math.fsum(values) for c, values in weights.items()}
        voted = any(weights.values())
        if voted and not any(sums.values()):
            fallback = Plurality().tally(order, ballots)
            return fallback.model_copy(update={"method": self.name, "fallback_used": True})
        winner, tie_broken = earliest_leader(order, sums)
        return VoteResult(method=self.name, winner=winner, tallies=sums, tie_broken=tie_broken, abstentions=abstentions)
