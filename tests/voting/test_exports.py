"""The voting package's public surface is pinned."""

from __future__ import annotations

import debatecode.voting as voting


def test_voting_all_is_pinned() -> None:
    assert voting.__all__ == [
        "Ballot",
        "Borda",
        "Condorcet",
        "Plurality",
        "Unanimous",
        "VoteResult",
        "VotingMethod",
        "Weighted",
        "choose_method",
        "condorcet_winner",
        "get_method",
        "method_names",
        "pairwise_matrix",
        "voter_weight",
    ]
    for name in voting.__all__:
        assert getattr(voting, name) is not None
