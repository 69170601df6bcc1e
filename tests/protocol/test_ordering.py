"""Agent ordering: seeded domain shuffles every few rounds, cross-cutting agents last."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from debatecode.protocol.ordering import CROSS_CUTTING, AgentOrdering, is_cross_cutting

ROLES = {
    "security": "security",
    "gc": "generator",
    "test": "test",
    "mc": "implementer",
    "obs": "observability",
    "proto": "designer",
    "ops": "operations",
}


def test_cross_cutting_order_is_fixed() -> None:
    assert CROSS_CUTTING == ("observability", "operations", "test", "security")


@pytest.mark.parametrize(("role", "expected"), [("Security", True), (" test ", True), ("generator", False)])
def test_is_cross_cutting_ignores_case_and_spaces(role: str, expected: bool) -> None:
    assert is_cross_cutting(role) is expected


def test_cross_cutting_agents_go_last_in_fixed_order_every_round() -> None:
    ordering = AgentOrdering(ROLES, seed=7)
    for round_no in range(1, 13):
        order = ordering.order(round_no)
        assert order[-4:] == ["obs", "ops", "test", "security"]
        assert sorted(order[:3]) == ["gc", "mc", "proto"]


def test_order_is_stable_between_reshuffles() -> None:
    ordering = AgentOrdering(ROLES, seed=3)
    assert ordering.order(1) == ordering.order(2) == ordering.order(3)
    assert ordering.order(4) == ordering.order(5) == ordering.order(6)
    assert ordering.order(7) == ordering.order(8) == ordering.order(9)


@pytest.mark.parametrize("seed", range(20))
def test_domain_agents_are_reshuffled_at_rounds_4_7_10(seed: int) -> None:
    ordering = AgentOrdering(ROLES, seed=seed)
    for before, at in ((3, 4), (6, 7), (9, 10)):
        assert ordering.order(before)[:3] != ordering.order(at)[:3]
        assert ordering.order(before)[3:] == ordering.order(at)[3:]


def test_reshuffle_rounds_follow_reshuffle_every() -> None:
    ordering = AgentOrdering(ROLES, seed=0, reshuffle_every=2)
    assert [r for r in range(1, 10) if ordering.is_reshuffle_round(r)] == [1, 3, 5, 7, 9]
    assert [ordering.epoch(r) for r in range(1, 6)] == [0, 0, 1, 1, 2]
    default = AgentOrdering(ROLES, seed=0)
    assert [r for r in range(1, 12) if default.is_reshuffle_round(r)] == [1, 4, 7, 10]


def test_same_seed_gives_same_orders_in_a_fresh_instance_asked_out_of_order() -> None:
    first = AgentOrdering(ROLES, seed=42)
    expected = [first.order(r) for r in range(1, 11)]
    resumed = AgentOrdering(dict(ROLES), seed=42)
    assert resumed.order(10) == expected[9]
    assert resumed.order(5) == expected[4]
    assert [resumed.order(r) for r in range(1, 11)] == expected


def test_different_seeds_give_different_histories() -> None:
    histories = {tuple(tuple(AgentOrdering(ROLES, seed=s).order(r)) for r in (1, 4, 7, 10)) for s in range(10)}
    assert len(histories) > 1


def test_single_domain_agent_is_never_shuffled() -> None:
    ordering = AgentOrdering({"solo": "generator", "sec": "security", "t": "test"}, seed=1)
    assert [ordering.order(r) for r in (1, 4, 7)] == [["solo", "t", "sec"]] * 3


def test_two_domain_agents_swap_at_every_reshuffle() -> None:
    ordering = AgentOrdering({"a": "generator", "b": "generator"}, seed=9)
    assert ordering.order(4) == ordering.order(1)[::-1]
    assert ordering.order(7) == ordering.order(1)


def test_agents_sharing_a_cross_cutting_role_keep_their_given_order() -> None:
    ordering = AgentOrdering({"s2": "security", "g": "generator", "s1": "Security", "o": "observability"}, seed=0)
    assert ordering.order(1) == ["g", "o", "s2", "s1"]
    assert ordering.cross_cutting_agents == ["o", "s2", "s1"]
    assert ordering.domain_agents == ["g"]


def test_invalid_arguments_raise() -> None:
    with pytest.raises(ValueError, match="reshuffle_every"):
        AgentOrdering(ROLES, seed=0, reshuffle_every=0)
    with pytest.raises(ValueError, match="numbered from 1"):
        AgentOrdering(ROLES, seed=0).order(0)


@given(
    roles=st.dictionaries(
        st.text(alphabet="abcdefgh", min_size=1, max_size=3),
        st.sampled_from(["generator", "designer", "judge", *CROSS_CUTTING]),
        max_size=10,
    ),
    seed=st.integers(min_value=0, max_value=2**32),
    round_no=st.integers(min_value=1, max_value=30),
    every=st.integers(min_value=1, max_value=5),
)
def test_every_round_is_a_permutation_with_cross_cutting_last(
    roles: dict[str, str], seed: int, round_no: int, every: int
) -> None:
    ordering = AgentOrdering(roles, seed=seed, reshuffle_every=every)
    order = ordering.order(round_no)
    assert sorted(order) == sorted(roles)
    cross = [agent for agent in order if is_cross_cutting(roles[agent])]
    assert order[len(order) - len(cross) :] == cross
    assert [CROSS_CUTTING.index(roles[a]) for a in cross] == sorted(CROSS_CUTTING.index(roles[a]) for a in cross)
    assert AgentOrdering(roles, seed=seed, reshuffle_every=every).order(round_no) == order


def test_seeded_orders_are_pinned_so_old_sessions_resume_identically() -> None:
    # If this changes, sessions stored before the change resume with different orders.
    ordering = AgentOrdering(ROLES, seed=42)
    assert [ordering.order(r)[:3] for r in (1, 4, 7, 10)] == [
        ["mc", "gc", "proto"],
        ["proto", "gc", "mc"],
        ["gc", "mc", "proto"],
        ["mc", "proto", "gc"],
    ]
