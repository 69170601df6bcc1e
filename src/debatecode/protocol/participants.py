"""Decide a session's participants and the protocol services its phases consult.

Planning style (CPDE/DPDE), the roster, the topology among competitors, the
speaking order, the satisfaction tracker and the round allowance are all
decided here, from the config and the task, before the first phase runs. They
are deterministic (seeded), so a resumed session rebuilds exactly the same ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from debatecode.agents.agent import Agent
from debatecode.config import DebateConfig
from debatecode.llm.types import CodeReply, PromptStyle
from debatecode.protocol.allowance import TokenAllowance
from debatecode.protocol.ordering import AgentOrdering
from debatecode.protocol.roster import build_roster
from debatecode.protocol.run import COMPETITOR_ROLES
from debatecode.protocol.satisfaction import SatisfactionTracker
from debatecode.task import Task
from debatecode.topology import create_topology, select_planning_style
from debatecode.topology.base import Topology

__all__ = ["Participants", "plan_participants"]


@dataclass
class Participants:
    """Who debates, how planning is split, and the services that follow from the roster."""

    agents: list[Agent]
    planning_style: str
    planning_reason: str
    topology: Topology
    ordering: AgentOrdering
    satisfaction: SatisfactionTracker
    allowance: TokenAllowance | None


def plan_participants(
    config: DebateConfig,
    task: Task,
    style_of: Callable[[str], PromptStyle],
    reply_of: Callable[[str], CodeReply] | None = None,
) -> Participants:
    """The roster for ``task`` and the services built on it (``reply_of``: see ``build_roster``)."""
    style, reason = select_planning_style(task.description, config.agents, task.difficulty, config.topology.planning)
    planning_style = str(style.value)
    agents = build_roster(config, planning_style, style_of, reply_of)
    competitors = [a for a in agents if a.role.name in COMPETITOR_ROLES]
    return Participants(
        agents=agents,
        planning_style=planning_style,
        planning_reason=reason,
        topology=create_topology(config.topology.type, [(a.id, a.role.name) for a in competitors]),
        ordering=AgentOrdering(
            {a.id: a.role.concern if a.role.cross_cutting else a.role.name for a in agents}, seed=config.topology.seed
        ),
        satisfaction=SatisfactionTracker(config.review.satisfaction_target, config.review.min_progress),
        allowance=TokenAllowance(config.llm.round_token_budget) if config.llm.round_token_budget is not None else None,
    )
