"""Tree topology: building from roles, routing, leaders, groups, rebalancing."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debatecode.topology import TreeNode, TreeTopology, build_tree
from debatecode.topology.concerns import PHASE_CONCERNS, role_concern

TEAM = [
    ("d", "designer"),
    ("g1", "generator"),
    ("g2", "generator"),
    ("r", "red"),
    ("b", "blue"),
    ("s", "security"),
    ("c", "contrarian"),
    ("m", "moonshot"),
    ("j", "judge"),
    ("p", "performance_analyzer"),
]


def assert_valid(tree: TreeTopology, expected: set[str]) -> None:
    """One rooted tree over exactly ``expected``: consistent parent/child links and levels."""
    nodes = {node.agent_id: node for node in tree.nodes()}
    assert set(nodes) == expected
    assert len(tree.agents) == len(expected)
    roots = [node for node in nodes.values() if node.parent is None]
    assert [node.agent_id for node in roots] == [tree.root]
    assert nodes[tree.root].level == 0
    for node in nodes.values():
        for child in node.children:
            assert nodes[child].parent == node.agent_id
            assert nodes[child].level == node.level + 1
        if node.parent is not None:
            assert node.agent_id in nodes[node.parent].children


# -- building ----------------------------------------------------------------------------------


def test_build_tree_puts_designer_at_root_and_one_team_lead_per_concern() -> None:
    tree = build_tree(TEAM)
    assert tree.root == "d"
    assert tree.node("d").children == ("g1", "j", "p", "s", "c")
    assert tree.node("g1").children == ("g2",)
    assert tree.node("s").children == ("r", "b")  # the security role leads red and blue
    assert tree.node("c").children == ("m",)
    assert tree.node("r") == TreeNode(agent_id="r", role="red", parent="s", children=(), level=2, concern="security")
    assert_valid(tree, {agent for agent, _ in TEAM})


@pytest.mark.parametrize(
    ("roles", "root"),
    [
        (["generator", "moderator", "designer", "lead"], "a3"),
        (["generator", "moderator", "designer"], "a2"),
        (["generator", "moderator"], "a1"),
        (["judge", "generator"], "a0"),
    ],
)
def test_root_prefers_lead_then_designer_then_moderator_else_first(roles: list[str], root: str) -> None:
    tree = build_tree([(f"a{i}", role) for i, role in enumerate(roles)])
    assert tree.root == root


def test_root_role_names_are_normalised() -> None:
    tree = build_tree([("x", "Performance Analyzer"), ("y", "Lead")])
    assert tree.root == "y"
    assert tree.node("x").concern == "quality"


def test_same_role_agents_hang_under_a_non_design_root_directly() -> None:
    tree = build_tree([("g1", "generator"), ("g2", "generator"), ("g3", "generator")])
    assert tree.root == "g1"
    assert tree.node("g1").children == ("g2", "g3")


def test_branching_limits_team_fan_out_breadth_first() -> None:
    agents = [("d", "designer")] + [(f"g{i}", "generator") for i in range(1, 8)]
    tree = build_tree(agents, branching=2)
    assert tree.node("d").children == ("g1",)
    assert tree.node("g1").children == ("g2", "g3")
    assert tree.node("g2").children == ("g4", "g5")
    assert tree.node("g3").children == ("g6", "g7")
    assert max(len(node.children) for node in tree.nodes() if node.agent_id != "d") <= 2
    assert_valid(tree, {agent for agent, _ in agents})


def test_build_tree_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="branching"):
        build_tree([("a", "generator")], branching=0)
    with pytest.raises(ValueError, match="at least one agent"):
        build_tree([])
    with pytest.raises(ValueError, match="repeated: a"):
        build_tree([("a", "generator"), ("a", "judge")])


def test_unknown_roles_form_the_general_team() -> None:
    tree = build_tree([("d", "designer"), ("x", "astrologer"), ("y", "poet")])
    assert tree.node("x").concern == "general"
    assert tree.node("d").children == ("x",)
    assert tree.node("x").children == ("y",)


# -- the constructor ---------------------------------------------------------------------------


def test_constructor_rejects_two_parents_cycles_and_strays() -> None:
    with pytest.raises(ValueError, match="more than one parent"):
        TreeTopology("r", {"r": ["a", "b"], "a": ["c"], "b": ["c"]})
    with pytest.raises(ValueError, match="root is listed as a child"):
        TreeTopology("r", {"r": ["a"], "a": ["r"]})
    with pytest.raises(ValueError, match="not reachable from it: x, y"):
        TreeTopology("r", {"r": ["a"], "x": ["y"], "y": ["x"]})


# -- routing -----------------------------------------------------------------------------------


def test_routes_go_up_to_the_common_parent_and_down() -> None:
    tree = build_tree(TEAM)
    assert tree.route("r", "b") == ["r", "s", "b"]  # siblings through their parent
    assert tree.route("r", "d") == ["r", "s", "d"]  # escalation
    assert tree.route("d", "m") == ["d", "c", "m"]  # delegation
    assert tree.route("g2", "m") == ["g2", "g1", "d", "c", "m"]
    assert tree.route("s", "r") == ["s", "r"]


def test_neighbours_are_parent_then_children() -> None:
    tree = build_tree(TEAM)
    assert tree.neighbours("s") == ["d", "r", "b"]
    assert tree.neighbours("d") == ["g1", "j", "p", "s", "c"]
    assert tree.neighbours("m") == ["c"]


def test_broadcast_is_level_order() -> None:
    tree = build_tree(TEAM)
    assert tree.broadcast_order() == ["d", "g1", "j", "p", "s", "c", "g2", "r", "b", "m"]
    assert tree.subtree("s") == ["s", "r", "b"]


# -- leaders and groups ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phase", "leader"),
    [
        (None, "d"),
        ("dehallucination", "d"),
        ("self_evolvement", "g1"),
        ("self-evolvement", "g1"),
        ("proposal", "g1"),
        ("critique", "j"),
        ("review", "p"),
        ("optimization", "p"),
        ("adversarial", "s"),
        ("Convergence", "d"),
    ],
)
def test_select_leader_maps_phase_to_its_concern(phase: str | None, leader: str) -> None:
    assert build_tree(TEAM).select_leader(phase) == leader


def test_every_phase_has_a_concern() -> None:
    assert set(PHASE_CONCERNS) == {
        "dehallucination",
        "self_evolvement",
        "proposal",
        "critique",
        "review",
        "optimization",
        "adversarial",
        "convergence",
    }


def test_select_leader_falls_back_to_root_when_concern_is_absent() -> None:
    tree = build_tree([("d", "designer"), ("g", "generator")])
    assert tree.select_leader("adversarial") == "d"


def test_select_leader_unknown_phase_lists_phases() -> None:
    with pytest.raises(ValueError, match="known phases: dehallucination"):
        build_tree(TEAM).select_leader("lunch")


def test_parallel_groups_are_the_leaders_independent_subtrees() -> None:
    tree = build_tree(TEAM)
    assert tree.parallel_groups() == [["g1", "g2"], ["j"], ["p"], ["s", "r", "b"], ["c", "m"]]
    assert tree.parallel_groups("adversarial") == [["r"], ["b"]]
    assert tree.parallel_groups("critique") == [["j"]]  # a leader without children works alone
    assert tree.coordinator() == "d"


# -- rebalancing -------------------------------------------------------------------------------


def test_removing_a_leaf_just_drops_it() -> None:
    tree = build_tree(TEAM)
    tree.remove("m")
    assert tree.node("c").children == ()
    assert_valid(tree, {agent for agent, _ in TEAM} - {"m"})


def test_failed_team_lead_children_go_to_its_siblings_same_concern_first() -> None:
    agents = [("d", "designer"), ("s", "security"), ("r", "red"), ("b", "blue"), ("x", "red"), ("y", "blue")]
    tree = build_tree(agents, branching=2)
    assert tree.node("s").children == ("r", "b")
    assert tree.node("r").children == ("x", "y")
    tree.remove("r")
    # r's children move to its sibling b, the only sibling, of the same concern
    assert tree.node("b").children == ("x", "y")
    assert_valid(tree, {"d", "s", "b", "x", "y"})


def test_orphans_spread_over_siblings_with_fewest_children() -> None:
    tree = TreeTopology("r", {"r": ["a", "b", "c"], "a": ["a1", "a2", "a3"], "b": ["b1"]})
    tree.remove("a")
    assert tree.node("c").children == ("a1", "a3")
    assert tree.node("b").children == ("b1", "a2")
    assert_valid(tree, {"r", "b", "c", "a1", "a2", "a3", "b1"})


def test_orphans_without_siblings_move_up_to_the_parent_in_place() -> None:
    tree = TreeTopology("r", {"r": ["a"], "a": ["x", "y"]})
    tree.remove("a")
    assert tree.node("r").children == ("x", "y")
    assert tree.node("x").level == 1


def test_failed_root_is_replaced_by_a_design_child_else_the_first_child() -> None:
    tree = build_tree([("l", "lead"), ("g", "generator"), ("d", "designer"), ("j", "judge")])
    assert tree.node("l").children == ("d", "g", "j")
    tree.remove("l")
    assert tree.root == "d"
    assert tree.node("d").children == ("g", "j")
    tree.remove("d")
    assert tree.root == "g"
    assert tree.node("g").children == ("j",)
    assert_valid(tree, {"g", "j"})


@settings(deadline=None)
@given(
    roles=st.lists(
        st.sampled_from(
            ["designer", "moderator", "generator", "implementer", "judge", "red", "blue", "security", "teacher", "x"]
        ),
        min_size=1,
        max_size=14,
    ),
    branching=st.integers(min_value=1, max_value=4),
    data=st.data(),
)
def test_tree_stays_valid_through_any_sequence_of_failures(
    roles: list[str], branching: int, data: st.DataObject
) -> None:
    agents = [(f"a{i}", role) for i, role in enumerate(roles)]
    tree = build_tree(agents, branching=branching)
    alive = {agent for agent, _ in agents}
    assert_valid(tree, alive)
    for node in tree.nodes():
        assert node.concern == role_concern(node.role)
        if node.level >= 2:
            assert len(node.children) <= branching
    while len(alive) > 1:
        victim = data.draw(st.sampled_from(sorted(alive)))
        tree.remove(victim)
        alive.discard(victim)
        assert_valid(tree, alive)
        groups = [agent for group in tree.parallel_groups() for agent in group]
        assert sorted([*groups, tree.root]) == sorted(alive) or groups == [tree.root]
        for src in sorted(alive)[:3]:
            for dst in sorted(alive)[-3:]:
                path = tree.route(src, dst)
                assert path[0] == src
                assert path[-1] == dst
                assert all(b in tree.neighbours(a) for a, b in itertools.pairwise(path))
