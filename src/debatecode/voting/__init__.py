"""Voting methods: ballots in, a deterministic winner out."""

from debatecode.voting.base import Ballot, VoteResult, VotingMethod
from debatecode.voting.plurality import Plurality

__all__ = ["Ballot", "Plurality", "VoteResult", "VotingMethod"]
