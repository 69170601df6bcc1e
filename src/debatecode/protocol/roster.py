"""Who takes part in a session: the authors and the roles the enabled phases need."""

from __future__ import annotations

from collections.abc import Callable

from debatecode.agents.agent import Agent
from debatecode.agents.prompts import CodeReply, PromptStyle
from debatecode.agents.roles import get_role
from debatecode.config import DebateConfig
from debatecode.llm.client import resolve_model

__all__ = ["AUTHOR_ROLES", "author_sampling", "build_roster", "code_reply_for", "model_for"]

AUTHOR_ROLES = ("generator", "implementer")
"""The roles that write candidates: ``generator`` (each author plans its own code) or ``implementer`` (CPDE)."""


def model_for(config: DebateConfig, role: str, index: int = 0) -> str:
    """The model of an agent playing ``role``; ``index`` numbers the authors from 0.

    Authors (``AUTHOR_ROLES``) use ``agent_models`` round-robin (heterogeneous
    debate), else the ``models`` entry of their role, else of ``generator``, else
    ``model``; every other role uses its ``models`` entry, else ``model``.
    """
    if role in AUTHOR_ROLES:
        if config.agent_models:
            return config.agent_models[index % len(config.agent_models)]
        return config.models.get(role) or config.models.get("generator") or config.model
    return config.models.get(role) or config.model


def author_sampling(config: DebateConfig, index: int) -> tuple[float, int]:
    """Temperature and seed of author ``index`` (from 0): the first decodes greedily, the others sample."""
    return (0.0 if index == 0 else config.llm.temperature), config.llm.seed + index + 1


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
    elif config.participants.red and phases.adjudication and config.adjudication.red_inputs > 0:
        roles.append("red")  # Red's first job: inputs that tell the leading candidates apart
    if phases.convergence and config.participants.teacher:
        roles.append("teacher")
    return roles


def code_reply_for(config: DebateConfig, model: str) -> CodeReply:
    """``llm.code_reply``, or ``model``'s own default when it is ``auto`` (as ``LLMClient.code_reply``).

    Raises:
        UnknownModelError: see ``resolve_model``.
    """
    setting = config.llm.code_reply
    return resolve_model(model).code_reply_default if setting == "auto" else setting


def build_roster(
    config: DebateConfig,
    planning_style: str,
    style_of: Callable[[str], PromptStyle],
    reply_of: Callable[[str], CodeReply] | None = None,
) -> list[Agent]:
    """The session's agents: ``agents`` authors (``agent-1``...) and one agent per needed role.

    Models come from ``model_for``: authors use ``agent_models`` round-robin
    (heterogeneous debate), else the ``models`` entry of their role, else of
    ``generator``, else ``model``; every other role uses its ``models`` entry, else
    ``model``. The first author decodes greedily, the others sample at
    ``llm.temperature`` with their own seed (``author_sampling``). ``reply_of`` gives
    each model's ``code_reply`` (``LLMClient.code_reply``; by default ``code_reply_for``).

    Raises:
        KeyError: a configured reviewer or optimizer names an unknown role.
        UnknownModelError: ``llm.code_reply`` is ``auto`` and a model string names no model.
    """
    if reply_of is None:

        def reply_of(model: str) -> CodeReply:
            return code_reply_for(config, model)

    author_role = get_role("implementer" if planning_style == "cpde" else "generator")
    agents: list[Agent] = []
    for index in range(config.agents):
        model = model_for(config, author_role.name, index)
        temperature, seed = author_sampling(config, index)
        agents.append(
            Agent(
                id=f"agent-{index + 1}",
                role=author_role,
                model=model,
                prompt_style=style_of(model),
                temperature=temperature,
                seed=seed,
                code_reply=reply_of(model),
            )
        )
    for offset, name in enumerate(_needed_roles(config, planning_style)):
        role = get_role(name)
        if role.kind == "tool":
            continue
        model = model_for(config, name)
        temperature = config.llm.temperature if name in ("moonshot", "red") else 0.0
        agents.append(
            Agent(
                id=name,
                role=role,
                model=model,
                prompt_style=style_of(model),
                temperature=temperature,
                seed=config.llm.seed + 101 + offset,
                code_reply=reply_of(model),
            )
        )
    return agents
