"""Voting methods: ballots in, a deterministic winner out.

``plurality``, ``borda``, ``condorcet``, ``unanimous`` and ``weighted``, found
by name with ``get_method`` or picked by number of agents with
``choose_method``. See ``docs/voting-and-topologies.md``.
"""

from debatecode.voting.base import Ballot, VoteResult, VotingMethod
from debatecode.voting.borda import Borda
from debatecode.voting.condorcet import Condorcet, condorcet_winner, pairwise_matrix
from debatecode.voting.plurality import Plurality
from debatecode.voting.registry import choose_method, get_method, method_names
from debatecode.voting.unanimous import Unanimous
from debatecode.voting.weighted import Weighted, voter_weight

__all__ = [
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
