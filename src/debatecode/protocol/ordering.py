"""Who speaks when: domain agents shuffled, cross-cutting agents last.

Per the N-agent debate loop:

- Domain agents (every agent whose role is not cross-cutting) speak first,
  in a seeded random order drawn at round 1 and re-drawn at rounds
  ``1 + k * reshuffle_every`` (4, 7, 10... by default). A re-draw always
  changes the order when there are at least two domain agents, so every
  reshuffle actually moves someone.
- Cross-cutting agents speak last, in the fixed order of ``CROSS_CUTTING``
  (observability → operations → test → security), so they review every
  domain proposal of the round. Several agents with the same cross-cutting
  role keep their given order.

The order of any round is a pure function of the agents, the seed and the
round number: the whole shuffle history is replayed from the seed, so a
resumed session sees exactly the orders the crashed one saw.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

__all__ = ["CROSS_CUTTING", "AgentOrdering", "is_cross_cutting"]

CROSS_CUTTING: tuple[str, ...] = ("observability", "operations", "test", "security")
"""Cross-cutting roles, in the fixed order they close each round."""

_MAX_REDRAWS = 32
"""Re-draws before a reshuffle that keeps landing on the same order settles for a rotation."""


def is_cross_cutting(role: str) -> bool:
    """Whether ``role`` (or a concern name) is one of ``CROSS_CUTTING``, ignoring case and surrounding spaces."""
    return role.strip().lower() in CROSS_CUTTING


class AgentOrdering:
    """Speaking order per round for a fixed set of agents.

    ``agent_roles`` maps agent id → role. The engine passes, for each agent,
    the role name or its cross-cutting concern (``test`` for an executor), so
    that a value in ``CROSS_CUTTING`` marks the agent cross-cutting. Dict
    order is the starting order of the domain agents and the order among
    agents with the same cross-cutting role.

    Raises:
        ValueError: from the constructor, when ``reshuffle_every`` is below 1.
    """

    def __init__(self, agent_roles: Mapping[str, str], seed: int, reshuffle_every: int = 3) -> None:
        if reshuffle_every < 1:
            raise ValueError(f"reshuffle_every must be at least 1, got {reshuffle_every}")
        self.seed = seed
        self.reshuffle_every = reshuffle_every
        self._domain = [agent for agent, role in agent_roles.items() if not is_cross_cutting(role)]
        self._cross = [
            agent for concern in CROSS_CUTTING for agent, role in agent_roles.items() if role.strip().lower() == concern
        ]
        # Epoch orders are drawn in sequence from one generator and cached, so any
        # round's order is the same whatever order the rounds are asked in.
        self._rng = random.Random(seed)
        self._epochs: list[list[str]] = []

    @property
    def domain_agents(self) -> list[str]:
        """The agents that get shuffled, in their given order."""
        return list(self._domain)

    @property
    def cross_cutting_agents(self) -> list[str]:
        """The agents that close every round, in speaking order."""
        return list(self._cross)

    def epoch(self, round_no: int) -> int:
        """How many reshuffles have happened by ``round_no`` (0 for rounds 1..reshuffle_every).

        Raises:
            ValueError: ``round_no`` is below 1.
        """
        if round_no < 1:
            raise ValueError(f"rounds are numbered from 1, got {round_no}")
        return (round_no - 1) // self.reshuffle_every

    def is_reshuffle_round(self, round_no: int) -> bool:
        """Whether the domain order is (re)drawn at the start of ``round_no`` (1, 4, 7, 10... by default).

        Raises:
            ValueError: ``round_no`` is below 1.
        """
        self.epoch(round_no)
        return (round_no - 1) % self.reshuffle_every == 0

    def order(self, round_no: int) -> list[str]:
        """Everyone's speaking order in ``round_no``: shuffled domain agents, then cross-cutting ones.

        Raises:
            ValueError: ``round_no`` is below 1.
        """
        return self._domain_order(self.epoch(round_no)) + self._cross

    def _domain_order(self, epoch: int) -> list[str]:
        if len(self._domain) < 2:
            return list(self._domain)
        if not self._epochs:
            first = list(self._domain)
            self._rng.shuffle(first)
            self._epochs.append(first)
        while len(self._epochs) <= epoch:
            self._epochs.append(self._redraw(self._epochs[-1]))
        return list(self._epochs[epoch])

    def _redraw(self, previous: list[str]) -> list[str]:
        order = list(previous)
        for _ in range(_MAX_REDRAWS):
            self._rng.shuffle(order)
            if order != previous:
                return order
        return previous[1:] + previous[:1]
