"""Render role and phase prompts from the jinja2 templates in ``templates/``.

Each phase has a chat variant (``<phase>.chat.j2``: a system and a user
message, the reply carries a fenced code block) and a completion variant
(``<phase>.completion.j2``: one raw prompt for base models that ends with
the function header, so the model writes the body).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import jinja2

from debatecode.agents.roles import RoleSpec
from debatecode.llm.client import Message
from debatecode.llm.parsing import COMPLETION_STOP
from debatecode.protocol.state import TestReport
from debatecode.task import Task

__all__ = ["Prompt", "PromptStyle", "render_prompt"]

PromptStyle = Literal["chat", "completion"]


@dataclass(frozen=True)
class Prompt:
    """Messages for one model call, and how to read the reply."""

    messages: list[Message]
    style: PromptStyle
    prefix: str | None = None
    """Completion style: the code the prompt ends with; the reply continues it."""
    stop: list[str] = field(default_factory=list)
    max_tokens: int | None = None

    @property
    def text(self) -> str:
        """The prompt as one string, for storage and reports."""
        if self.style == "completion":
            return self.messages[-1]["content"]
        return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in self.messages)


def _comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in str(text).splitlines())


def _docstring(text: str) -> str:
    body = str(text).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = body.strip().splitlines()
    return "\n".join([lines[0], *[("    " + line).rstrip() for line in lines[1:]]]) if lines else ""


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("debatecode.agents", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["comment"] = _comment
    env.filters["docstring"] = _docstring
    env.filters["dedent"] = textwrap.dedent
    return env


def _failures(report: TestReport | None) -> list[Any]:
    return report.failures() if report is not None else []


def render_prompt(
    phase: str,
    *,
    style: PromptStyle,
    role: RoleSpec,
    task: Task,
    n_agents: int,
    **context: Any,
) -> Prompt:
    """Render the prompt of ``phase`` (``propose``, ``revise``, ``vote``) in ``style``.

    Raises:
        jinja2.TemplateNotFound: no template for that phase and style.
    """
    env = _environment()
    values: dict[str, Any] = {"task": task, "role": role, "n_agents": n_agents, **context}
    values.setdefault("failures", _failures(context.get("report")))
    if style == "completion":
        header = env.get_template("_header.completion.j2").render(**values).rstrip("\n")
        header = header + "\n" if task.signature else header
        values["header"] = header
        # The prompt must end exactly with the header, so the model continues the function body.
        text = env.get_template(f"{phase}.completion.j2").render(**values).rstrip("\n")
        if phase != "vote" and header.endswith("\n"):
            text += "\n"
        if phase == "vote":
            return Prompt(messages=[{"role": "user", "content": text}], style=style, stop=["\n"], max_tokens=4)
        return Prompt(
            messages=[{"role": "user", "content": text}], style=style, prefix=header, stop=list(COMPLETION_STOP)
        )
    system = env.get_template("system.chat.j2").render(**values).strip()
    user = env.get_template(f"{phase}.chat.j2").render(**values).strip()
    return Prompt(messages=[{"role": "system", "content": system}, {"role": "user", "content": user}], style=style)
