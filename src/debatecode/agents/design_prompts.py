"""Prompts of design debates: what the moderator and the debaters are asked, from ``templates/design/``.

Design replies are prose in a small labelled format (``Stance:``,
``Challenge:``, ``Satisfaction:``...) that a small model can follow and
``protocol.design.replies`` can read. A chat model gets a system message with
its perspective and the debate's rules; a completion-style (base) model gets
both as one text.
"""

from __future__ import annotations

from typing import Any, Literal

from debatecode.agents.prompts import Prompt, PromptStyle, _environment

__all__ = ["DESIGN_KINDS", "design_prompt"]

DesignKind = Literal["analyse", "clarify", "position", "argue", "rebut", "poll", "summarise", "synthesise", "review"]
DESIGN_KINDS: tuple[str, ...] = (
    "analyse",
    "clarify",
    "position",
    "argue",
    "rebut",
    "poll",
    "summarise",
    "synthesise",
    "review",
)


def design_prompt(
    kind: DesignKind,
    *,
    style: PromptStyle,
    speaker: str,
    name: str = "",
    focus: str = "",
    words: int = 150,
    max_tokens: int | None = None,
    **values: Any,
) -> Prompt:
    """The prompt of ``kind`` for ``speaker`` (``moderator`` or a perspective key), in ``style``.

    Raises:
        KeyError: unknown kind.
    """
    if kind not in DESIGN_KINDS:
        raise KeyError(f"unknown design prompt {kind!r}; known: {', '.join(DESIGN_KINDS)}")
    env = _environment()
    context: dict[str, Any] = {
        "speaker": speaker,
        "name": name,
        "focus": focus,
        "words": words,
        "context": "",
        "guidance": [],
        "clarification": "",
        "mode": "deliberative",
        "challenge": False,
        "scored": False,
        "poll": False,
        "summary": "",
        "history": "",
        "escalation": "",
        "others": [],
        **values,
    }
    system = env.get_template("design/system.j2").render(**context).strip()
    user = env.get_template(f"design/{kind}.j2").render(**context).strip()
    if style == "completion":
        return Prompt(
            [{"role": "user", "content": f"{system}\n\n{user}\n"}], "completion", max_tokens=max_tokens, output="text"
        )
    return Prompt(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        style=style,
        max_tokens=max_tokens,
        output="text",
    )
