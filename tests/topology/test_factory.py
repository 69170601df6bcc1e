"""create_topology by name."""

from __future__ import annotations

import pytest

from debatecode.topology import (
    TOPOLOGY_NAMES,
    ChainTopology,
    MeshTopology,
    StarTopology,
    Topology,
    TreeTopology,
    create_topology,
)


@pytest.mark.parametrize(
    ("name", "cls"),
    [("mesh", MeshTopology), ("Star", StarTopology), (" chain ", ChainTopology), ("TREE", TreeTopology)],
)
def test_create_topology_by_name(name: str, cls: type[Topology]) -> None:
    topo = create_topology(name, ["a", "b", "c"])
    assert isinstance(topo, cls)
    assert sorted(topo.agents) == ["a", "b", "c"]


def test_create_topology_unknown_name_lists_known_ones() -> None:
    assert TOPOLOGY_NAMES == ("chain", "mesh", "star", "tree")
    with pytest.raises(ValueError, match="unknown topology 'ring'; known topologies: chain, mesh, star, tree"):
        create_topology("ring", ["a"])


def test_create_topology_accepts_role_pairs_and_passes_options() -> None:
    tree = create_topology("tree", [("g", "generator"), ("d", "designer"), ("j", "judge")], branching=2)
    assert isinstance(tree, TreeTopology)
    assert tree.root == "d"
    star = create_topology("star", [("a", "generator"), ("b", "moderator")], hub="b")
    assert isinstance(star, StarTopology)
    assert star.hub == "b"


def test_create_topology_rejects_bad_agents() -> None:
    with pytest.raises(ValueError, match="at least one agent"):
        create_topology("mesh", [])
