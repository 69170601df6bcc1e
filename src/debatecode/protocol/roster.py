"""Who takes part in a session: the authors and the roles the enabled phases need."""

from __future__ import annotations

from collections.abc import Callable

from debatecode.agents.agent import Agent
from debatecode.agents.prompts import PromptStyle
from debatecode.agents.roles import get_role
from debatecode.config import DebateConfig

__all__ = ["build_roster"]


def _needed_roles(config: DebateConfig, planning_style: str) -> list[str]:
    if config.strategy != "debate":
        return []
    phases = config.phases
    roles: list[str] = []
    if planning_style == "cpde":
        roles.append("designer")
    if phases.dehallucination:
        roles.append("moderator")
    if config.participants.moonshot:
        roles.append("moonshot")
    if config.participants.contrarian:
        roles.append("contrarian")
    if phases.review:
        roles.extend(r for r in config.review.reviewers if r not in roles)
    if phases.optimization:
        roles.extend(r for r in config.optimization.roles if r not in roles)
    if phases.adversarial:
        roles.extend(r for r in ("red", "blue") if r not in roles)
    if phases.convergence and config.participants.teacher:
        roles.append("teacher")
    return roles


def build_roster(config: DebateConfig, planning_style: str, style_of: Callable[[str], PromptStyle]) -> list[Agent]:
    """The session's agents: ``agents`` authors (``agent-1``...) and one agent per needed role.

    Authors use ``agent_models`` round-robin (heterogeneous debate), else the
    ``generator`` entry of ``models``, else ``model``; every other role uses its
    ``models`` entry, else ``model``. The first author decodes greedily, the
    others sample at ``llm.temperature`` with their own seed.

    Raises:
        KeyError: a configured reviewer or optimizer names an unknown role.
    """
    author_role = get_role("implementer" if planning_style == "cpde" else "generator")
    agents: list[Agent] = []
    for index in range(config.agents):
        if config.agent_models:
            model = config.agent_models[index % len(config.agent_models)]
        else:
            model = config.models.get(author_role.name) or config.models.get("generator") or config.model
        agents.append(
            Agent(
                id=f"agent-{index + 1}",
                role=author_role,
                model=model,
                prompt_style=style_of(model),
                temperature=0.0 if index == 0 else config.llm.temperature,
                seed=config.llm.seed + index + 1,
            )
        )
    for offset, name in enumerate(_needed_roles(config, planning_style)):
        role = get_role(name)
        if role.kind == "tool":
            continue
        model = config.models.get(name) or config.model
        temperature = config.llm.temperature if name in ("moonshot", "red") else 0.0
        agents.append(
            Agent(
                id=name,
                role=role,
                model=model,
                prompt_style=style_of(model),
                temperature=temperature,
                seed=config.llm.seed + 101 + offset,
            )
        )
    return agents
