"""The topology contract: who hears whom, and who may work at the same time.

A topology is built over agent ids, in a given order (the order breaks every
tie). It answers four questions for the engine:

- ``neighbours(agent)``: whose messages and candidates the agent receives,
  which are also the agents it critiques;
- ``route(src, dst)``: the hops a message takes, ``src`` and ``dst`` included;
- ``broadcast_order()``: the order in which to deliver a message to everyone;
- ``parallel_groups()``: groups that may run concurrently. Groups share no
  dependency within a round; inside a group, agents run in the listed order.
  A coordinator (a star's hub, a tree's root) is in no group: it plans before
  the groups run and gathers their results after.

``remove(agent)`` takes a failed agent out and rebalances what is left.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable

__all__ = ["AgentLine", "Topology", "check_agents"]


def check_agents(agents: Iterable[str]) -> list[str]:
    """The agent ids as a list, checked.

    Raises:
        ValueError: no agents, an empty id, or an id listed twice.
    """
    ids = list(agents)
    if not ids:
        raise ValueError("a topology needs at least one agent")
    if any(not agent for agent in ids):
        raise ValueError("agent ids must be non-empty strings")
    repeated = sorted({agent for agent in ids if ids.count(agent) > 1})
    if repeated:
        raise ValueError(f"agent ids must be unique; repeated: {', '.join(repeated)}")
    return ids


class Topology(abc.ABC):
    """Who receives whose messages, and how the engine may schedule agents."""

    name: str = "abstract"

    @property
    @abc.abstractmethod
    def agents(self) -> list[str]:
        """The current agents, in the topology's order (a copy)."""

    @abc.abstractmethod
    def neighbours(self, agent: str) -> list[str]:
        """The agents whose messages ``agent`` receives and whose candidates it critiques.

        Raises:
            KeyError: ``agent`` is not in the topology.
        """

    @abc.abstractmethod
    def route(self, src: str, dst: str) -> list[str]:
        """The hop path from ``src`` to ``dst``, both included (``[src]`` when they are the same).

        Raises:
            KeyError: either agent is not in the topology.
        """

    @abc.abstractmethod
    def broadcast_order(self) -> list[str]:
        """Every agent once, in the order a broadcast reaches them."""

    @abc.abstractmethod
    def parallel_groups(self) -> list[list[str]]:
        """Groups that may run concurrently; inside a group agents run in order.

        The coordinator, when the topology has one, is in no group unless it is
        the only agent left.
        """

    @abc.abstractmethod
    def remove(self, agent: str) -> None:
        """Take a failed agent out and rebalance the rest.

        Raises:
            KeyError: ``agent`` is not in the topology.
            ValueError: ``agent`` is the last one left.
        """

    def coordinator(self) -> str | None:
        """The agent that plans before and gathers after the parallel groups, if any."""
        return None

    def __contains__(self, agent: object) -> bool:
        return agent in self.agents

    def __len__(self) -> int:
        return len(self.agents)

    def _require(self, *agents: str) -> None:
        known = self.agents
        for agent in agents:
            if agent not in known:
                raise KeyError(f"unknown agent {agent!r} in {self.name} topology; agents: {', '.join(known)}")

    def _check_removable(self, agent: str) -> None:
        self._require(agent)
        if len(self.agents) == 1:
            raise ValueError(f"cannot remove {agent!r}: it is the last agent of the {self.name} topology")


class AgentLine(Topology):
    """A topology whose whole state is its agents in order (mesh, chain): the links follow from the order.

    Raises:
        ValueError: from the constructor, when the agent ids are empty or repeated.
    """

    def __init__(self, agents: Iterable[str]) -> None:
        self._agents = check_agents(agents)

    @property
    def agents(self) -> list[str]:
        return list(self._agents)

    def broadcast_order(self) -> list[str]:
        """The agents in order."""
        return list(self._agents)

    def remove(self, agent: str) -> None:
        """Drop the agent; the links of those left follow from their order.

        Raises:
            KeyError: ``agent`` is not in the topology.
            ValueError: ``agent`` is the last one left.
        """
        self._check_removable(agent)
        self._agents.remove(agent)
