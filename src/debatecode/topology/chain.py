"""Chain: each agent receives from its predecessor, like a pipeline."""

from __future__ import annotations

from debatecode.topology.base import AgentLine

__all__ = ["ChainTopology"]


class ChainTopology(AgentLine):
    """Agents in a line; each one receives (and critiques) its predecessor's work.

    The head of the chain has no predecessor: it starts the pipeline and
    critiques nobody. Routes follow the links in either direction (feedback
    travels back the way the work came), one hop at a time. Removing an agent links its
    predecessor and successor.

    Raises:
        ValueError: from the constructor, when the agent ids are empty or repeated.
    """

    name = "chain"

    def neighbours(self, agent: str) -> list[str]:
        """``[predecessor]``, or ``[]`` for the head.

        Raises:
            KeyError: ``agent`` is not in the topology.
        """
        self._require(agent)
        index = self._agents.index(agent)
        return [self._agents[index - 1]] if index > 0 else []

    def route(self, src: str, dst: str) -> list[str]:
        """Every agent between ``src`` and ``dst`` along the chain, in travel order.

        Raises:
            KeyError: either agent is not in the topology.
        """
        self._require(src, dst)
        start, end = self._agents.index(src), self._agents.index(dst)
        if start <= end:
            return self._agents[start : end + 1]
        return self._agents[end : start + 1][::-1]

    def parallel_groups(self) -> list[list[str]]:
        """One group holding the whole chain: each agent waits for its predecessor."""
        return [list(self._agents)]
