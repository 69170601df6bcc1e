"""Topologies by name."""

from __future__ import annotations

from collections.abc import Sequence

from debatecode.topology.base import Topology
from debatecode.topology.chain import ChainTopology
from debatecode.topology.mesh import MeshTopology
from debatecode.topology.star import StarTopology
from debatecode.topology.tree_builder import build_tree

__all__ = ["TOPOLOGY_NAMES", "create_topology"]

TOPOLOGY_NAMES: tuple[str, ...] = ("chain", "mesh", "star", "tree")
"""Every name ``create_topology`` accepts."""


def create_topology(
    name: str,
    agents: Sequence[str | tuple[str, str]],
    *,
    hub: str | None = None,
    branching: int = 3,
) -> Topology:
    """The topology called ``name`` (case-insensitive) over ``agents``.

    ``agents`` are ids or ``(id, role)`` pairs; only ``tree`` reads roles (a
    bare id has role ``""``). ``hub`` is read by ``star`` only (default: the
    first agent) and ``branching`` by ``tree`` only.

    Raises:
        ValueError: an unknown name (the message lists the known ones), or
            agents or options the chosen topology rejects.
    """
    pairs = [(agent, "") if isinstance(agent, str) else (agent[0], agent[1]) for agent in agents]
    ids = [agent for agent, _ in pairs]
    key = name.strip().lower()
    if key == "mesh":
        return MeshTopology(ids)
    if key == "star":
        return StarTopology(ids, hub=hub)
    if key == "chain":
        return ChainTopology(ids)
    if key == "tree":
        return build_tree(pairs, branching=branching)
    raise ValueError(f"unknown topology {name!r}; known topologies: {', '.join(TOPOLOGY_NAMES)}")
