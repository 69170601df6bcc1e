"""Mesh, star and chain: neighbours, routes, broadcast, groups, failures."""

from __future__ import annotations

import itertools

import pytest

from debatecode.topology import ChainTopology, MeshTopology, StarTopology, Topology, create_topology

AGENTS = ["a", "b", "c", "d"]


@pytest.mark.parametrize("cls", [MeshTopology, StarTopology, ChainTopology])
def test_constructor_rejects_empty_and_repeated_ids(cls: type[Topology]) -> None:
    with pytest.raises(ValueError, match="at least one agent"):
        cls([])  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="repeated: a"):
        cls(["a", "b", "a"])  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="non-empty"):
        cls(["a", ""])  # type: ignore[call-arg]


@pytest.mark.parametrize("name", ["mesh", "star", "chain", "tree"])
def test_unknown_agents_raise_key_error_everywhere(name: str) -> None:
    topo = create_topology(name, AGENTS)
    for call in (
        lambda: topo.neighbours("zz"),
        lambda: topo.route("a", "zz"),
        lambda: topo.route("zz", "a"),
        lambda: topo.remove("zz"),
    ):
        with pytest.raises(KeyError, match="unknown agent 'zz'"):
            call()


@pytest.mark.parametrize("name", ["mesh", "star", "chain", "tree"])
def test_the_last_agent_cannot_be_removed(name: str) -> None:
    topo = create_topology(name, ["solo"])
    with pytest.raises(ValueError, match="last agent"):
        topo.remove("solo")
    assert topo.agents == ["solo"]


@pytest.mark.parametrize("name", ["mesh", "star", "chain", "tree"])
def test_routes_start_and_end_at_their_endpoints_and_follow_links(name: str) -> None:
    topo = create_topology(name, AGENTS)
    assert topo.route("b", "b") == ["b"]
    for src in AGENTS:
        for dst in AGENTS:
            path = topo.route(src, dst)
            assert path[0] == src
            assert path[-1] == dst
            assert len(set(path)) == len(path)
            for hop, nxt in itertools.pairwise(path):
                assert nxt in topo.neighbours(hop) or hop in topo.neighbours(nxt)


@pytest.mark.parametrize("name", ["mesh", "star", "chain", "tree"])
def test_broadcast_reaches_everyone_once_and_groups_cover_all_but_the_coordinator(name: str) -> None:
    topo = create_topology(name, AGENTS)
    assert sorted(topo.broadcast_order()) == sorted(AGENTS)
    grouped = [agent for group in topo.parallel_groups() for agent in group]
    assert len(grouped) == len(set(grouped))
    coordinator = topo.coordinator()
    assert sorted(grouped + ([coordinator] if coordinator else [])) == sorted(AGENTS)
    assert len(topo) == 4
    assert "a" in topo
    assert "zz" not in topo


# -- mesh --------------------------------------------------------------------------------------


def test_mesh_everyone_neighbours_everyone() -> None:
    mesh = MeshTopology(AGENTS)
    assert mesh.neighbours("b") == ["a", "c", "d"]
    assert mesh.route("a", "d") == ["a", "d"]
    assert mesh.broadcast_order() == AGENTS
    assert mesh.parallel_groups() == [["a"], ["b"], ["c"], ["d"]]
    assert mesh.coordinator() is None


def test_mesh_remove_keeps_the_rest_fully_connected() -> None:
    mesh = MeshTopology(AGENTS)
    mesh.remove("b")
    assert mesh.agents == ["a", "c", "d"]
    assert mesh.neighbours("a") == ["c", "d"]


# -- star --------------------------------------------------------------------------------------


def test_star_spokes_talk_through_the_hub() -> None:
    star = StarTopology(AGENTS, hub="c")
    assert star.hub == "c"
    assert star.neighbours("c") == ["a", "b", "d"]
    assert star.neighbours("a") == ["c"]
    assert star.route("a", "d") == ["a", "c", "d"]
    assert star.route("c", "b") == ["c", "b"]
    assert star.route("b", "c") == ["b", "c"]
    assert star.broadcast_order() == ["c", "a", "b", "d"]
    assert star.parallel_groups() == [["a"], ["b"], ["d"]]
    assert star.coordinator() == "c"


def test_star_hub_defaults_to_first_agent_and_must_be_an_agent() -> None:
    assert StarTopology(AGENTS).hub == "a"
    with pytest.raises(ValueError, match="hub 'x' is not one of the agents"):
        StarTopology(AGENTS, hub="x")


def test_star_failed_hub_is_replaced_by_first_spoke() -> None:
    star = StarTopology(AGENTS)
    star.remove("a")
    assert star.hub == "b"
    assert star.spokes == ["c", "d"]
    assert star.route("c", "d") == ["c", "b", "d"]


def test_star_failed_spoke_is_dropped() -> None:
    star = StarTopology(AGENTS)
    star.remove("c")
    assert star.neighbours("a") == ["b", "d"]


def test_star_hub_alone_is_its_own_group() -> None:
    star = StarTopology(["a", "b"])
    star.remove("b")
    assert star.parallel_groups() == [["a"]]


# -- chain -------------------------------------------------------------------------------------


def test_chain_each_agent_receives_from_its_predecessor() -> None:
    chain = ChainTopology(AGENTS)
    assert chain.neighbours("a") == []
    assert chain.neighbours("c") == ["b"]
    assert chain.route("a", "d") == ["a", "b", "c", "d"]
    assert chain.route("d", "b") == ["d", "c", "b"]
    assert chain.broadcast_order() == AGENTS
    assert chain.parallel_groups() == [AGENTS]


def test_chain_remove_links_predecessor_to_successor() -> None:
    chain = ChainTopology(AGENTS)
    chain.remove("b")
    assert chain.neighbours("c") == ["a"]
    assert chain.route("a", "d") == ["a", "c", "d"]
    chain.remove("a")
    assert chain.neighbours("c") == []
