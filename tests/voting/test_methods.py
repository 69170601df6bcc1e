"""Each voting method on hand-worked examples."""

from __future__ import annotations

import pytest

from debatecode.voting import (
    Ballot,
    Borda,
    Condorcet,
    Plurality,
    Unanimous,
    VotingMethod,
    Weighted,
    condorcet_winner,
    pairwise_matrix,
    voter_weight,
)


def b(voter: str, *ranking: str, weight: float = 1.0) -> Ballot:
    return Ballot(voter=voter, ranking=list(ranking), weight=weight)


ALL_METHODS: list[VotingMethod] = [Plurality(), Borda(), Condorcet(), Unanimous(), Weighted()]


@pytest.mark.parametrize("method", ALL_METHODS, ids=lambda m: m.name)
def test_every_method_rejects_an_empty_candidate_list(method: VotingMethod) -> None:
    with pytest.raises(ValueError, match="at least one candidate"):
        method.tally([], [b("v", "a")])


@pytest.mark.parametrize("method", ALL_METHODS, ids=lambda m: m.name)
def test_every_method_names_itself_in_the_result(method: VotingMethod) -> None:
    assert method.tally(["a", "b"], [b("v", "a")]).method == method.name


@pytest.mark.parametrize("method", ALL_METHODS, ids=lambda m: m.name)
def test_no_ballots_gives_the_first_candidate_by_tie_break(method: VotingMethod) -> None:
    result = method.tally(["x", "y"], [])
    assert result.winner == "x"
    assert result.tie_broken is True


@pytest.mark.parametrize("method", ALL_METHODS, ids=lambda m: m.name)
def test_ballots_naming_only_unknown_candidates_are_abstentions(method: VotingMethod) -> None:
    result = method.tally(["a", "b"], [b("v1", "ghost"), b("v2"), b("v3", "b")])
    assert result.abstentions == 2
    assert result.winner == "b"


# -- plurality ---------------------------------------------------------------------------------


def test_plurality_counts_only_first_known_choice() -> None:
    result = Plurality().tally(["a", "b", "c"], [b("1", "ghost", "b", "a"), b("2", "b"), b("3", "a", "b")])
    assert result.tallies == {"a": 1.0, "b": 2.0, "c": 0.0}
    assert result.winner == "b"
    assert not result.tie_broken


# -- borda -------------------------------------------------------------------------------------


def test_borda_full_rankings_score_n_minus_1_down_to_0() -> None:
    ballots = [b("1", "a", "b", "c"), b("2", "b", "c", "a"), b("3", "b", "a", "c")]
    result = Borda().tally(["a", "b", "c"], ballots)
    assert result.tallies == {"a": 3.0, "b": 5.0, "c": 1.0}
    assert result.winner == "b"


def test_borda_unranked_candidates_share_the_leftover_points() -> None:
    # four candidates: "a" gets 3; b, c, d share positions worth 2, 1, 0 -> 1 each
    result = Borda().tally(["a", "b", "c", "d"], [b("1", "a")])
    assert result.tallies == {"a": 3.0, "b": 1.0, "c": 1.0, "d": 1.0}
    # ranking two: a=3, b=2; c and d share 1 and 0 -> 0.5 each
    result = Borda().tally(["a", "b", "c", "d"], [b("1", "a", "b")])
    assert result.tallies == {"a": 3.0, "b": 2.0, "c": 0.5, "d": 0.5}


def test_borda_every_ballot_hands_out_the_same_total() -> None:
    n = 4
    for ranking in (["a"], ["a", "b"], ["a", "b", "c"], ["d", "c", "b", "a"]):
        totals = Borda().tally(["a", "b", "c", "d"], [b("v", *ranking)]).tallies
        assert sum(totals.values()) == n * (n - 1) / 2


def test_borda_tie_goes_to_earliest_candidate() -> None:
    result = Borda().tally(["c", "a", "b"], [b("1", "a", "b", "c"), b("2", "c", "b", "a")])
    assert result.tallies["a"] == result.tallies["c"] == result.tallies["b"]
    assert result.winner == "c"
    assert result.tie_broken


def test_borda_can_elect_a_compromise_plurality_would_not() -> None:
    ballots = [b("1", "a", "b", "c"), b("2", "a", "b", "c"), b("3", "c", "b", "a"), b("4", "c", "b", "a"), b("5", "b")]
    assert Plurality().tally(["a", "b", "c"], ballots).winner == "a"
    assert Borda().tally(["a", "b", "c"], ballots).winner == "b"


# -- condorcet ---------------------------------------------------------------------------------


def test_pairwise_matrix_counts_ranked_over_unranked() -> None:
    matrix = pairwise_matrix(["a", "b", "c"], [b("1", "b"), b("2", "a", "c")])
    assert matrix["b"] == {"a": 1, "b": 0, "c": 1}
    assert matrix["a"] == {"a": 0, "b": 1, "c": 1}
    assert matrix["c"] == {"a": 0, "b": 1, "c": 0}


def test_condorcet_winner_beats_everyone_head_to_head() -> None:
    ballots = [b("1", "a", "b", "c"), b("2", "b", "a", "c"), b("3", "a", "c", "b")]
    result = Condorcet().tally(["a", "b", "c"], ballots)
    assert result.winner == "a"
    assert result.tallies == {"a": 2.0, "b": 1.0, "c": 0.0}
    assert not result.fallback_used
    assert condorcet_winner(["a", "b", "c"], ballots) == "a"


def test_condorcet_cycle_falls_back_to_borda() -> None:
    cycle = [b("1", "a", "b", "c"), b("2", "b", "c", "a"), b("3", "c", "a", "b")]
    assert condorcet_winner(["a", "b", "c"], cycle) is None
    result = Condorcet().tally(["b", "a", "c"], cycle)
    assert result.fallback_used
    assert result.method == "condorcet"
    assert result.tallies == Borda().tally(["b", "a", "c"], cycle).tallies
    assert result.winner == "b"  # all Borda totals tie; earliest in the given order
    assert result.tie_broken


def test_condorcet_pairwise_tie_has_no_winner_and_falls_back() -> None:
    result = Condorcet().tally(["a", "b"], [b("1", "a"), b("2", "b")])
    assert result.fallback_used
    assert result.winner == "a"


def test_condorcet_single_candidate_wins_without_fallback() -> None:
    result = Condorcet().tally(["only"], [b("1", "only")])
    assert result.winner == "only"
    assert not result.fallback_used


def test_condorcet_winner_can_differ_from_plurality_winner() -> None:
    ballots = [
        b("1", "a", "b", "c"),
        b("2", "a", "b", "c"),
        b("3", "c", "b", "a"),
        b("4", "c", "b", "a"),
        b("5", "b", "a", "c"),
    ]
    assert Plurality().tally(["a", "b", "c"], ballots).winner == "a"
    assert Condorcet().tally(["a", "b", "c"], ballots).winner == "b"


# -- unanimous ---------------------------------------------------------------------------------


def test_unanimous_agreement_reaches_consensus() -> None:
    result = Unanimous().tally(["a", "b"], [b("1", "b", "a"), b("2", "b"), b("3")])
    assert result.consensus_reached
    assert result.winner == "b"
    assert result.disagreements == []
    assert result.abstentions == 1
    assert not result.fallback_used


def test_unanimous_disagreement_lists_dissenters_and_keeps_plurality_leader() -> None:
    result = Unanimous().tally(["a", "b", "c"], [b("x", "a"), b("y", "b"), b("z", "a"), b("w", "c")])
    assert not result.consensus_reached
    assert result.winner == "a"
    assert result.fallback_used
    assert result.disagreements == ["y ranks b first", "w ranks c first"]


def test_unanimous_without_voters_has_no_consensus() -> None:
    result = Unanimous().tally(["a", "b"], [b("1", "ghost")])
    assert not result.consensus_reached
    assert result.disagreements == []


# -- weighted ----------------------------------------------------------------------------------


def test_weighted_sums_weights_of_first_choices() -> None:
    ballots = [b("1", "a", weight=0.9), b("2", "b", weight=0.4), b("3", "b", weight=0.4)]
    result = Weighted().tally(["a", "b"], ballots)
    assert result.tallies == {"a": 0.9, "b": 0.8}
    assert result.winner == "a"
    assert Plurality().tally(["a", "b"], ballots).winner == "b"


def test_weighted_all_zero_weights_falls_back_to_plurality() -> None:
    ballots = [b("1", "a", weight=0), b("2", "b", weight=0), b("3", "b", weight=0)]
    result = Weighted().tally(["a", "b"], ballots)
    assert result.fallback_used
    assert result.winner == "b"
    assert result.tallies == {"a": 1.0, "b": 2.0}


def test_weighted_tie_goes_to_earliest_candidate() -> None:
    result = Weighted().tally(["b", "a"], [b("1", "a", weight=0.5), b("2", "b", weight=0.5)])
    assert result.winner == "b"
    assert result.tie_broken


@pytest.mark.parametrize(
    ("pass_rate", "quality", "expected"),
    [(1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.7), (0.0, 1.0, 0.3), (0.5, 0.5, 0.5)],
)
def test_voter_weight_mixes_pass_rate_and_quality(pass_rate: float, quality: float, expected: float) -> None:
    assert voter_weight(pass_rate, quality) == pytest.approx(expected)


@pytest.mark.parametrize(("pass_rate", "quality"), [(-0.1, 0.5), (1.1, 0.5), (0.5, -1.0), (0.5, 2.0)])
def test_voter_weight_rejects_values_outside_unit_interval(pass_rate: float, quality: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        voter_weight(pass_rate, quality)
