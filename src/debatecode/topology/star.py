"""Star: spokes talk only through the hub."""

from __future__ import annotations

from collections.abc import Iterable

from debatecode.topology.base import Topology, check_agents

__all__ = ["StarTopology"]


class StarTopology(Topology):
    """A hub receives and critiques every spoke; a spoke hears only the hub.

    The hub defaults to the first agent. If the hub fails, the first remaining
    spoke becomes the hub.

    Raises:
        ValueError: from the constructor, when the agent ids are empty or
            repeated, or ``hub`` is not one of them.
    """

    name = "star"

    def __init__(self, agents: Iterable[str], hub: str | None = None) -> None:
        ids = check_agents(agents)
        if hub is None:
            hub = ids[0]
        if hub not in ids:
            raise ValueError(f"hub {hub!r} is not one of the agents: {', '.join(ids)}")
        self._hub = hub
        self._spokes = [agent for agent in ids if agent != hub]

    @property
    def hub(self) -> str:
        """The agent every message passes through."""
        return self._hub

    @property
    def spokes(self) -> list[str]:
        """Every agent but the hub, in order."""
        return list(self._spokes)

    @property
    def agents(self) -> list[str]:
        return [self._hub, *self._spokes]

    def neighbours(self, agent: str) -> list[str]:
        """The hub's neighbours are all spokes; a spoke's only neighbour is the hub.

        Raises:
            KeyError: ``agent`` is not in the topology.
        """
        self._require(agent)
        return self.spokes if agent == self._hub else [self._hub]

    def route(self, src: str, dst: str) -> list[str]:
        """Spoke to spoke goes through the hub: ``[src, hub, dst]``; anything involving the hub is direct.

        Raises:
            KeyError: either agent is not in the topology.
        """
        self._require(src, dst)
        if src == dst:
            return [src]
        if self._hub in (src, dst):
            return [src, dst]
        return [src, self._hub, dst]

    def broadcast_order(self) -> list[str]:
        """The hub first, then the spokes."""
        return self.agents

    def parallel_groups(self) -> list[list[str]]:
        """One group per spoke; the hub coordinates (it is alone in a group only if it has no spokes)."""
        return [[spoke] for spoke in self._spokes] or [[self._hub]]

    def coordinator(self) -> str:
        return self._hub

    def remove(self, agent: str) -> None:
        """Drop a spoke; if the hub fails, promote the first spoke to hub.

        Raises:
            KeyError: ``agent`` is not in the topology.
            ValueError: ``agent`` is the last one left.
        """
        self._check_removable(agent)
        if agent == self._hub:
            self._hub = self._spokes.pop(0)
        else:
            self._spokes.remove(agent)
