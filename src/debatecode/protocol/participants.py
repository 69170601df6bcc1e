"""Set up a run's participants and the protocol services its phases consult.

Planning style (CPDE/DPDE), the roster, the topology among competitors, the
speaking order and the satisfaction tracker are all decided here, from the
config and the task, before the first phase runs. They are deterministic
(seeded), so a resumed session rebuilds exactly the same ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from debatecode.agents.agent import Agent
from debatecode.agents.prompts import PromptStyle
from debatecode.config import DebateConfig
from debatecode.protocol.context import SatisfactionTracker, TokenAllowance
from debatecode.protocol.ordering import AgentOrdering
from debatecode.protocol.run import DebateRun
from debatecode.task import Task
from debatecode.topology import create_topology, select_planning_style

__all__ = ["attach_services"]

Roster = Callable[[DebateConfig, str, Callable[[str], PromptStyle]], list[Agent]]


def attach_services(run: DebateRun, task: Task, build_roster: Roster, style_of: Callable[[str], Any]) -> None:
    """Fill ``run.agents``, ``run.planning_style`` and ``run.extras`` (topology, ordering, satisfaction)."""
    config = run.config
    style, reason = select_planning_style(task.description, config.agents, task.difficulty, config.topology.planning)
    run.planning_style = str(style.value)
    run.agents = build_roster(config, run.planning_style, style_of)
    competitors = [a for a in run.agents if a.role.name in ("generator", "implementer", "moonshot")]
    run.extras["planning_reason"] = reason
    run.extras["topology"] = create_topology(config.topology.type, [(a.id, a.role.name) for a in competitors])
    run.extras["ordering"] = AgentOrdering(
        {a.id: a.role.concern if a.role.cross_cutting else a.role.name for a in run.agents}, seed=config.topology.seed
    )
    run.extras["satisfaction"] = SatisfactionTracker(config.review.satisfaction_target, config.review.min_progress)
    if config.llm.round_token_budget is not None:
        run.extras["allowance"] = TokenAllowance(config.llm.round_token_budget)
