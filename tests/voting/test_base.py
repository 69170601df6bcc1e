"""Ballot and VoteResult: defaults, validation, backward-compatible fields."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from debatecode.voting import Ballot, VoteResult
from debatecode.voting.base import candidate_order, clean_ranking


def test_ballot_weight_defaults_to_one() -> None:
    assert Ballot(voter="v", ranking=["a"]).weight == 1.0


@pytest.mark.parametrize("weight", [-0.5, float("nan"), float("inf")])
def test_ballot_rejects_negative_or_non_finite_weight(weight: float) -> None:
    with pytest.raises(ValidationError):
        Ballot(voter="v", ranking=["a"], weight=weight)


def test_vote_result_new_fields_default_to_consensus_without_disagreements() -> None:
    result = VoteResult(method="plurality", winner="a", tallies={"a": 1.0})
    assert result.consensus_reached is True
    assert result.disagreements == []
    assert result.fallback_used is False


def test_clean_ranking_drops_unknown_and_repeated_entries() -> None:
    ballot = Ballot(voter="v", ranking=["x", "b", "a", "b", "ghost", "a"])
    assert clean_ranking(ballot, ["a", "b"]) == ["b", "a"]


def test_candidate_order_removes_repeats_and_rejects_empty() -> None:
    assert candidate_order(["b", "a", "b"], "test") == ["b", "a"]
    with pytest.raises(ValueError, match="at least one candidate"):
        candidate_order([], "test")
