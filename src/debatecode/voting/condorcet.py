"""Condorcet: the candidate who beats every other one head to head.

For each pair of candidates the ballots are compared one by one: a ballot
prefers ``a`` to ``b`` when it ranks ``a`` higher, or ranks ``a`` and leaves
``b`` out. Two candidates a ballot leaves out are not compared by it. A
Condorcet winner wins every pairwise contest strictly.

When there is none (a preference cycle, or a pairwise tie), the count falls
back to Borda over the same ballots and the result says ``fallback_used``.
"""

from __future__ import annotations

from collections.abc import Sequence

from debatecode.voting.base import Ballot, VoteResult, VotingMethod, candidate_order, clean_ranking
from debatecode.voting.borda import Borda

__all__ = ["Condorcet", "condorcet_winner", "pairwise_matrix"]


def pairwise_matrix(candidates: Sequence[str], ballots: Sequence[Ballot]) -> dict[str, dict[str, int]]:
    """``matrix[a][b]``: how many ballots prefer ``a`` to ``b`` (the diagonal is 0).

    Repeated candidates are counted once.
    """
    order = list(dict.fromkeys(candidates))
    matrix = {a: dict.fromkeys(order, 0) for a in order}
    for ballot in ballots:
        ranking = clean_ranking(ballot, matrix)
        ranked = set(ranking)
        for position, a in enumerate(ranking):
            for b in ranking[position + 1 :]:
                matrix[a][b] += 1
            for b in order:
                if b not in ranked:
                    matrix[a][b] += 1
    return matrix


def condorcet_winner(candidates: Sequence[str], ballots: Sequence[Ballot]) -> str | None:
    """The candidate that strictly beats every other head to head, or ``None``."""
    matrix = pairwise_matrix(candidates, ballots)
    for a in matrix:
        if all(matrix[a][b] > matrix[b][a] for b in matrix if b != a):
            return a
    return None


class Condorcet(VotingMethod):
    """Condorcet winner; without one, Borda with ``fallback_used=True``.

    With a winner, ``tallies`` holds each candidate's number of pairwise wins;
    after the fallback it holds the Borda totals.
    """

    name = "condorcet"

    def tally(self, candidates: list[str], ballots: list[Ballot]) -> VoteResult:
        """Find the Condorcet winner or fall back to Borda.

        Raises:
            ValueError: ``candidates`` is empty.
        """
        order = candidate_order(candidates, self.name)
        matrix = pairwise_matrix(order, ballots)
        abstentions = sum(1 for ballot in ballots if not clean_ranking(ballot, matrix))
        wins: dict[str, float] = {a: float(sum(matrix[a][b] > matrix[b][a] for b in order if b != a)) for a in order}
        winner = next((a for a in order if wins[a] == len(order) - 1), None)
        if winner is not None:
            return VoteResult(method=self.name, winner=winner, tallies=wins, abstentions=abstentions)
        borda = Borda().tally(order, ballots)
        return borda.model_copy(update={"method": self.name, "fallback_used": True})
