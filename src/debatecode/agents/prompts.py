"""Render role and phase prompts from the jinja2 templates in ``templates/``.

Every prompt kind has a chat variant (``<kind>.chat.j2``: a system and a user
message) and a completion variant (``<kind>.completion.j2``: one raw prompt
for base models). A completion prompt ends where the model should continue:
the function header for code, an open call for test inputs, a label for
scores. ``Prompt.prefix`` is that continued text, so a parser can rebuild the
whole answer as ``prefix + reply``.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import jinja2

from debatecode.agents.roles import RoleSpec
from debatecode.execution.results import TestReport
from debatecode.llm.parsing import COMPLETION_STOP
from debatecode.llm.types import CodeReply, Message, PromptStyle
from debatecode.task import Task

__all__ = ["KINDS", "CodeReply", "Prompt", "PromptStyle", "render_prompt", "template_variants"]

Output = Literal["code", "text", "calls", "tests", "choice"]

_TEXT_STOP = ["\n\n\n", "\ndef ", "\nclass ", "\n```"]


@dataclass(frozen=True)
class KindSpec:
    """What a prompt kind produces and how long a base model may run on."""

    output: Output
    completion_max_tokens: int | None = None


KINDS: dict[str, KindSpec] = {
    "draft": KindSpec("code"),
    "refine": KindSpec("code"),
    "contrast": KindSpec("code"),
    "address_review": KindSpec("code"),
    "optimize": KindSpec("code"),
    "blue": KindSpec("code"),
    "moonshot": KindSpec("code"),
    "clarify_ask": KindSpec("text", 120),
    "clarify_answer": KindSpec("text", 160),
    "plan": KindSpec("text", 160),
    "contrarian": KindSpec("text", 120),
    "review": KindSpec("text", 120),
    "teach": KindSpec("text", 160),
    "attack": KindSpec("calls", 96),
    "distinguish": KindSpec("calls", 96),
    "adjudicate": KindSpec("text", 96),
    "red": KindSpec("tests", 128),
    "vote": KindSpec("choice", 4),
    "reflect": KindSpec("text", 120),
    "retry": KindSpec("code"),
    "lessons": KindSpec("text", 120),
}


@dataclass(frozen=True)
class Prompt:
    """Messages for one model call, and how to read the reply."""

    messages: list[Message]
    style: PromptStyle
    prefix: str | None = None
    """Completion style: the text the prompt ends with and the reply continues."""
    stop: list[str] = field(default_factory=list)
    max_tokens: int | None = None
    output: Output = "code"

    @property
    def text(self) -> str:
        """The prompt as one string, for storage and reports."""
        if self.style == "completion":
            return self.messages[-1]["content"]
        return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in self.messages)

    def full_reply(self, reply: str) -> str:
        """The answer as the model meant it: the continued prefix plus the reply (completion style)."""
        if self.style == "completion" and self.prefix and self.output != "code":
            return self.prefix + reply
        return reply


def _comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in str(text).splitlines())


def _oneline(text: str) -> str:
    return " ".join(str(text).split())


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
    env.filters["oneline"] = _oneline
    env.filters["dedent"] = textwrap.dedent
    return env


def _failures(report: TestReport | None) -> list[Any]:
    return report.failures() if report is not None else []


_DEFAULTS: dict[str, Any] = {
    "clarifications": [],
    "plan": None,
    "guidance": [],
    "feedback": None,
    "code": "",
    "report": None,
    "quality": None,
    "previous_reviews": "",
    "previous": [],
    "leader": None,
    "leader_passed": 0,
    "leader_total": 0,
    "known": [],
    "alternatives": [],
    "reflections": [],
    "code_reply": "code-only",
    "attempt": 1,
    "limit": 3,
    "lessons": [],
}


def template_variants(kind: str) -> list[str]:
    """The named variants of a prompt kind (``default`` plus ``<kind>-<name>.*.j2`` templates)."""
    names = {"default"}
    for template in _environment().list_templates():
        if template.startswith(f"{kind}-") and template.endswith(".chat.j2"):
            names.add(template[len(kind) + 1 : -len(".chat.j2")])
    return sorted(names)


def render_prompt(
    kind: str,
    *,
    style: PromptStyle,
    role: RoleSpec,
    task: Task,
    n_agents: int = 1,
    variant: str = "default",
    **context: Any,
) -> Prompt:
    """Render the prompt of ``kind`` (see ``KINDS``) in ``style``, optionally a named template ``variant``.

    Raises:
        KeyError: unknown kind.
        ValueError: unknown variant (the message lists the known ones).
        jinja2.TemplateNotFound: no template for that kind and style.
    """
    spec = KINDS[kind]
    if variant != "default":
        if variant not in template_variants(kind):
            raise ValueError(f"unknown {kind} template {variant!r}; known: {', '.join(template_variants(kind))}")
        kind_file = f"{kind}-{variant}"
    else:
        kind_file = kind
    env = _environment()
    values: dict[str, Any] = {
        **_DEFAULTS,
        "task": task,
        "role": role,
        "n_agents": n_agents,
        "output": spec.output,
        "kind": kind,
    }
    values.update(context)
    values.setdefault("failures", _failures(values.get("report")))
    if style == "completion":
        return _completion(kind_file, spec, env, values, task)
    system = env.get_template("system.chat.j2").render(**values).strip()
    user = env.get_template(f"{kind_file}.chat.j2").render(**values).strip()
    return Prompt(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        style=style,
        output=spec.output,
    )


def _completion(kind: str, spec: KindSpec, env: jinja2.Environment, values: dict[str, Any], task: Task) -> Prompt:
    header = env.get_template("_header.completion.j2").render(**values).rstrip("\n")
    header = header + "\n" if task.signature or task.code_prompt else header
    values["header"] = header
    text = env.get_template(f"{kind}.completion.j2").render(**values).rstrip("\n")
    if spec.output == "code":
        # The prompt must end exactly with the header, so the model continues the function body.
        if header.endswith("\n"):
            text += "\n"
        return Prompt([{"role": "user", "content": text}], "completion", header, list(COMPLETION_STOP), None, "code")
    if spec.output == "choice":
        return Prompt(
            [{"role": "user", "content": text}], "completion", None, ["\n"], spec.completion_max_tokens, "choice"
        )
    last_line = text.rsplit("\n", 1)[-1]
    if spec.output == "calls":
        return Prompt(
            [{"role": "user", "content": text}],
            "completion",
            last_line,
            ["\n\n", "\n#", "\ndef "],
            spec.completion_max_tokens,
            "calls",
        )
    if spec.output == "tests":
        tail = text[text.rindex("def test_") :] if "def test_" in text else ""
        return Prompt(
            [{"role": "user", "content": text}],
            "completion",
            tail,
            ["\nif __name__", "\n```", "\nclass "],
            spec.completion_max_tokens,
            "tests",
        )
    text += " " if text.endswith(":") else ""
    prefix = text.rsplit("\n", 1)[-1]
    # A base model repeats the score label forever; its first line is the score.
    stop = [*_TEXT_STOP, "\n# Satisfaction"] if kind == "review" else list(_TEXT_STOP)
    if kind.startswith("reflect"):
        stop = [*_TEXT_STOP, "\n# Root cause", "\ndef "]
    if kind == "adjudicate":  # the doctest's output line is the answer
        stop = [*_TEXT_STOP, "\n>>>", "\n#"]
    return Prompt([{"role": "user", "content": text}], "completion", prefix, stop, spec.completion_max_tokens, "text")
