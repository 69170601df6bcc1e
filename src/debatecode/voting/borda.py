"""Borda count: points by rank position, highest total wins.

With ``n`` candidates, a ballot gives ``n - 1`` points to its first choice,
``n - 2`` to its second, and so on down to 0. A partial ranking leaves the
lower positions unfilled: the candidates it does not rank share the points of
those positions equally. A ballot ranking ``k`` of ``n`` candidates therefore
gives each unranked one ``(n - 1 - k) / 2`` points, the average of the points
of positions ``k .. n - 1``. Every non-abstaining ballot hands out the same
total, ``n (n - 1) / 2``, so leaving candidates out buys no advantage, and a
ballot with a single choice ranks candidates exactly as plurality does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from debatecode.voting.base import Ballot, VoteResult, VotingMethod, candidate_order, clean_ranking, earliest_leader

__all__ = ["Borda", "borda_points"]


def borda_points(candidates: Sequence[str], ballots: Sequence[Ballot]) -> tuple[dict[str, float], int]:
    """Borda totals per candidate (in ``candidates`` order) and the number of abstentions.

    ``candidates`` must already be free of repeats.
    """
    n = len(candidates)
    points: dict[str, list[float]] = {c: [] for c in candidates}
    abstentions = 0
    for ballot in ballots:
        ranking = clean_ranking(ballot, points)
        if not ranking:
            abstentions += 1
            continue
        for position, choice in enumerate(ranking):
            points[choice].append(float(n - 1 - position))
        share = (n - 1 - len(ranking)) / 2
        ranked = set(ranking)
        for candidate in candidates:
            if candidate not in ranked:
                points[candidate].append(share)
    # fsum is exact, so totals do not depend on the order ballots arrive in.
    return {c: math.fsum(values) for c, values in points.items()}, abstentions


class Borda(VotingMethod):
    """Borda count; unranked candidates share the leftover points; ties go to the earliest candidate."""

    name = "borda"

    def tally(self, candidates: list[str], ballots: list[Ballot]) -> VoteResult:
        """Sum Borda points.

        Raises:
            ValueError: ``candidates`` is empty.
        """
        order = candidate_order(candidates, self.name)
        totals, abstentions = borda_points(order, ballots)
        winner, tie_broken = earliest_leader(order, totals)
        return VoteResult(
            method=self.name, winner=winner, tallies=totals, tie_broken=tie_broken, abstentions=abstentions
        )
