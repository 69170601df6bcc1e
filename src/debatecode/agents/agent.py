"""An agent: a role played by a model, with its own sampling settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from debatecode.agents.prompts import CodeReply, Prompt, PromptStyle, render_prompt
from debatecode.agents.roles import RoleSpec
from debatecode.task import Task

__all__ = ["Agent"]


@dataclass(frozen=True)
class Agent:
    """One debate participant.

    ``temperature`` and ``seed`` differ per agent so that agents sharing one
    model still write different candidates; the first author decodes greedily.
    """

    id: str
    role: RoleSpec
    model: str
    prompt_style: PromptStyle
    temperature: float
    seed: int
    code_reply: CodeReply = "code-only"

    def prompt(self, kind: str, task: Task, n_agents: int = 1, **context: Any) -> Prompt:
        """The prompt this agent sends for ``kind`` (see ``agents.prompts.KINDS``)."""
        context.setdefault("code_reply", self.code_reply)
        return render_prompt(kind, style=self.prompt_style, role=self.role, task=task, n_agents=n_agents, **context)
