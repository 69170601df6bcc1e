"""Mesh: everyone hears everyone."""

from __future__ import annotations

from debatecode.topology.base import AgentLine

__all__ = ["MeshTopology"]


class MeshTopology(AgentLine):
    """Every agent receives and critiques every other agent; all agents may run at once.

    Removing an agent leaves the others fully connected.

    Raises:
        ValueError: from the constructor, when the agent ids are empty or repeated.
    """

    name = "mesh"

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

    def parallel_groups(self) -> list[list[str]]:
        """One group per agent: nobody waits for anybody within a round."""
        return [[agent] for agent in self._agents]
