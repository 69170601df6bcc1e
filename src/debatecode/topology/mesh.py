"""Mesh: everyone hears everyone."""

from __future__ import annotations

from collections.abc import Iterable

from debatecode.topology.base import Topology, check_agents

__all__ = ["MeshTopology"]


class MeshTopology(Topology):
    """Every agent receives and critiques every other agent; all agents may run at once.

    Raises:
        ValueError: from the constructor, when the agent ids are empty or repeated.
    """

    name = "mesh"

    def __init__(self, agents: Iterable[str]) -> None:
        self._agents = check_agents(agents)

    @property
    def agents(self) -> list[str]:
        return list(self._agents)

    def neighbours(self, agent: str) -> list[str]:
        """Every other agent, in order.

        Raises:
            KeyError: ``agent`` is not in the topology.
        """
        self._require(agent)
        return [other for other in self._agents if other != agent]

    def route(self, src: str, dst: str) -> list[str]:
        """Direct: ``[src, dst]``.

        Raises:
            KeyError: either agent is not in the topology.
        """
        self._require(src, dst)
        return [src] if src == dst else [src, dst]

    def broadcast_order(self) -> list[str]:
        return list(self._agents)

    def parallel_groups(self) -> list[list[str]]:
        """One group per agent: nobody waits for anybody within a round."""
        return [[agent] for agent in self._agents]

    def remove(self, agent: str) -> None:
        """Drop the agent; the others stay fully connected.

        Raises:
            KeyError: ``agent`` is not in the topology.
            ValueError: ``agent`` is the last one left.
        """
        self._check_removable(agent)
        self._agents.remove(agent)
