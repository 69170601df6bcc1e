"""The shared candidate ranking: tests first, then agreement on generated inputs within a tier, then age."""

from __future__ import annotations

import pytest

from debatecode.execution.probes import ProbeResult
from debatecode.execution.ranking import Evidence, behaviour_of, rank_candidates


def order(evidence: list[Evidence]) -> list[int]:
    return [r.evidence.position for r in rank_candidates(evidence)]


def test_more_visible_tests_beat_any_agreement() -> None:
    lone_right = Evidence(position=3, tests=(3,), behaviour=("1", "2"))
    agreeing_wrong = [Evidence(position=i, tests=(2,), behaviour=("9", "9")) for i in range(3)]
    assert order([*agreeing_wrong, lone_right])[0] == 3


def test_weaker_test_kinds_only_order_candidates_equal_on_the_stronger_ones() -> None:
    evidence = [
        Evidence(position=0, tests=(2, 0)),
        Evidence(position=1, tests=(2, 5)),
        Evidence(position=2, tests=(3, 0)),
    ]
    assert order(evidence) == [2, 1, 0]


def test_within_a_tier_the_candidate_that_agrees_with_most_others_wins() -> None:
    evidence = [
        Evidence(position=0, tests=(1,), behaviour=("a", "b", "c")),
        Evidence(position=1, tests=(1,), behaviour=("a", "x", "y")),
        Evidence(position=2, tests=(1,), behaviour=("a", "x", "y")),
    ]
    ranked = rank_candidates(evidence)
    assert [r.evidence.position for r in ranked] == [1, 2, 0]
    assert [r.agreement for r in ranked] == [4, 4, 2] and [r.cluster for r in ranked] == [2, 2, 1]


def test_an_error_or_timeout_agrees_with_nothing_even_another_error() -> None:
    evidence = [
        Evidence(position=0, tests=(1,), behaviour=(None, None)),
        Evidence(position=1, tests=(1,), behaviour=(None, None)),
        Evidence(position=2, tests=(1,), behaviour=("1", None)),
        Evidence(position=3, tests=(1,), behaviour=("1", "2")),
    ]
    ranked = rank_candidates(evidence)
    assert [r.evidence.position for r in ranked] == [2, 3, 0, 1]
    assert [r.agreement for r in ranked] == [1, 1, 0, 0]


def test_agreement_is_counted_within_the_tier_not_across_tiers() -> None:
    """The wrong majority below cannot lift a candidate of the top tier, nor be lifted by it."""
    evidence = [
        Evidence(position=0, tests=(2,), behaviour=("right",)),
        Evidence(position=1, tests=(2,), behaviour=("other",)),
        *[Evidence(position=i, tests=(1,), behaviour=("other",)) for i in range(2, 6)],
    ]
    assert order(evidence)[:2] == [0, 1]


def test_the_earliest_candidate_wins_a_full_tie_and_no_behaviour_is_a_tie() -> None:
    assert order([Evidence(position=5, tests=(1,)), Evidence(position=2, tests=(1,))]) == [2, 5]


def test_two_candidates_cannot_share_a_position_and_behaviours_must_align() -> None:
    with pytest.raises(ValueError, match="own position"):
        rank_candidates([Evidence(position=0, tests=(1,)), Evidence(position=0, tests=(2,))])
    with pytest.raises(ValueError, match="different lengths"):
        rank_candidates([Evidence(0, (1,), ("a",)), Evidence(1, (1,), ("a", "b"))])


def test_behaviour_of_probe_results_keeps_values_and_drops_raises_and_timeouts() -> None:
    results = [
        ProbeResult("f(1)", "value", "2"),
        ProbeResult("f(0)", "raises", "ValueError"),
        ProbeResult("f(-1)", "timeout", ""),
    ]
    assert behaviour_of(results) == ("2", None, None)
