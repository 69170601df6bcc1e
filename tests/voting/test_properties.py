"""Properties every count must keep, checked with hypothesis."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
)
from debatecode.voting.base import clean_ranking

NAMES = ["a", "b", "c", "d", "e"]

candidate_lists = st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True)


def ballots_for(candidates: list[str], *, max_size: int = 9, weights: bool = False) -> st.SearchStrategy[list[Ballot]]:
    """Ballots ranking subsets of the candidates, sometimes with unknown names mixed in."""
    entries = st.sampled_from([*candidates, "ghost"])
    weight = st.floats(min_value=0.0, max_value=5.0, allow_nan=False) if weights else st.just(1.0)
    ballot = st.tuples(st.lists(entries, max_size=len(candidates) + 1), weight)
    return st.lists(ballot, max_size=max_size).map(
        lambda rows: [Ballot(voter=f"v{i}", ranking=ranking, weight=w) for i, (ranking, w) in enumerate(rows)]
    )


@st.composite
def elections(draw: st.DrawFn, *, weights: bool = False) -> tuple[list[str], list[Ballot]]:
    candidates = draw(candidate_lists)
    return candidates, draw(ballots_for(candidates, weights=weights))


ALL_METHODS: list[VotingMethod] = [Plurality(), Borda(), Condorcet(), Unanimous(), Weighted()]


def _prefers(ballot: Ballot, a: str, b: str, candidates: list[str]) -> bool:
    """Reference reading of one ballot: ``a`` ranked above ``b``, or ranked while ``b`` is not."""
    ranking = [c for i, c in enumerate(ballot.ranking) if c in candidates and c not in ballot.ranking[:i]]
    if a not in ranking:
        return False
    return b not in ranking or ranking.index(a) < ranking.index(b)


def _firsts(candidates: list[str], ballots: list[Ballot]) -> list[str]:
    return [ranking[0] for ballot in ballots if (ranking := clean_ranking(ballot, candidates))]


@settings(deadline=None)
@given(elections())
def test_a_condorcet_winner_always_wins_condorcet(election: tuple[list[str], list[Ballot]]) -> None:
    candidates, ballots = election
    wins = {
        (a, x): sum(_prefers(ballot, a, x, candidates) for ballot in ballots) for a in candidates for x in candidates
    }
    beats_all = [a for a in candidates if all(wins[a, x] > wins[x, a] for x in candidates if x != a)]
    expected = {a: {x: wins[a, x] if a != x else 0 for x in candidates} for a in candidates}
    assert pairwise_matrix(candidates, ballots) == expected
    result = Condorcet().tally(candidates, ballots)
    if beats_all:
        assert result.winner == beats_all[0]
        assert not result.fallback_used
    else:
        assert condorcet_winner(candidates, ballots) is None
        assert result.fallback_used
        assert result.winner == Borda().tally(candidates, ballots).winner


@given(elections(), st.randoms(use_true_random=False))
def test_borda_totals_are_invariant_under_ballot_order(election: tuple[list[str], list[Ballot]], rnd: object) -> None:
    candidates, ballots = election
    shuffled = list(ballots)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert Borda().tally(candidates, shuffled).tallies == Borda().tally(candidates, ballots).tallies


@given(elections())
def test_plurality_winner_has_the_most_first_choices(election: tuple[list[str], list[Ballot]]) -> None:
    candidates, ballots = election
    counts = Counter(_firsts(candidates, ballots))
    result = Plurality().tally(candidates, ballots)
    assert counts[result.winner] == max(counts[c] for c in candidates)


@given(elections())
def test_unanimous_reaches_consensus_iff_all_first_choices_agree(election: tuple[list[str], list[Ballot]]) -> None:
    candidates, ballots = election
    firsts = _firsts(candidates, ballots)
    result = Unanimous().tally(candidates, ballots)
    agree = len(set(firsts)) == 1
    assert result.consensus_reached is agree
    if agree:
        assert result.winner == firsts[0]
        assert result.disagreements == []
    else:
        assert len(result.disagreements) == sum(1 for f in firsts if f != result.winner)


@pytest.mark.parametrize("method", ALL_METHODS, ids=lambda m: m.name)
@given(election=elections(weights=True), rnd=st.randoms(use_true_random=False))
def test_results_are_deterministic_under_ballot_permutation(
    method: VotingMethod, election: tuple[list[str], list[Ballot]], rnd: object
) -> None:
    candidates, ballots = election
    shuffled = list(ballots)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    first = method.tally(candidates, ballots)
    second = method.tally(candidates, shuffled)
    assert (first.winner, first.tallies, first.tie_broken, first.abstentions, first.fallback_used) == (
        second.winner,
        second.tallies,
        second.tie_broken,
        second.abstentions,
        second.fallback_used,
    )
    assert sorted(first.disagreements) == sorted(second.disagreements)


@pytest.mark.parametrize("method", [Plurality(), Borda(), Weighted()], ids=lambda m: m.name)
@given(election=elections(weights=True))
def test_tie_breaks_follow_candidate_order(method: VotingMethod, election: tuple[list[str], list[Ballot]]) -> None:
    candidates, ballots = election
    result = method.tally(candidates, ballots)
    top = max(result.tallies.values())
    leaders = [c for c in candidates if result.tallies[c] == top]
    assert result.winner == leaders[0]
    assert result.tie_broken is (len(leaders) > 1)


@given(elections())
def test_tie_breaks_move_with_candidate_order(election: tuple[list[str], list[Ballot]]) -> None:
    candidates, ballots = election
    reversed_candidates = candidates[::-1]
    forward = Borda().tally(candidates, ballots)
    backward = Borda().tally(reversed_candidates, ballots)
    assert forward.tallies == backward.tallies
    top = max(forward.tallies.values())
    leaders = [c for c in candidates if forward.tallies[c] == top]
    assert forward.winner == leaders[0]
    assert backward.winner == leaders[-1]


@given(elections())
def test_weighted_with_unit_weights_equals_plurality(election: tuple[list[str], list[Ballot]]) -> None:
    candidates, ballots = election
    weighted = Weighted().tally(candidates, ballots)
    plurality = Plurality().tally(candidates, ballots)
    assert (weighted.winner, weighted.tallies, weighted.tie_broken, weighted.abstentions) == (
        plurality.winner,
        plurality.tallies,
        plurality.tie_broken,
        plurality.abstentions,
    )


@given(elections())
def test_borda_single_choice_ballots_rank_like_plurality(election: tuple[list[str], list[Ballot]]) -> None:
    candidates, ballots = election
    single = [Ballot(voter=x.voter, ranking=clean_ranking(x, candidates)[:1]) for x in ballots]
    assert Borda().tally(candidates, single).winner == Plurality().tally(candidates, single).winner


@pytest.mark.parametrize("method", ALL_METHODS, ids=lambda m: m.name)
@given(election=elections(weights=True))
def test_winner_is_always_a_candidate(method: VotingMethod, election: tuple[list[str], list[Ballot]]) -> None:
    candidates, ballots = election
    result = method.tally(candidates, ballots)
    assert result.winner in candidates
    assert list(result.tallies) == candidates
