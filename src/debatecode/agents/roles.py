"""Roles: what a participant is for, in words a model reads.

A role is a stance plus the prompts that carry it. Most roles are played by a
model; ``compiler`` and ``executor`` are tool roles, played by the sandbox
itself, because in this framework a claim about code is settled by running it.
Cross-cutting roles speak last in every round, in a fixed order. The
cross-cutting reviewers ``test``, ``observability`` and ``operations`` take
their focus from the perspective catalog (``perspectives.yaml``), so a code
review and a design debate hold them to the same brief.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from debatecode.agents.perspectives import CROSS_CUTTING_CONCERNS, load_catalog

__all__ = ["CATALOG_REVIEWERS", "CROSS_CUTTING_ORDER", "ROLES", "RoleSpec", "get_role", "role_names"]

CROSS_CUTTING_ORDER = CROSS_CUTTING_CONCERNS
"""Cross-cutting concerns, in the order they speak at the end of a round."""

CATALOG_REVIEWERS: dict[str, str] = {
    "observability": "Observability Reviewer",
    "operations": "Operations Reviewer",
    "test": "Test Reviewer",
}
"""Cross-cutting roles built from the perspective catalog entry of the same key: role name → title."""


class RoleSpec(BaseModel):
    """A role: its name, what it optimises for, and how it takes part."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str
    focus: str
    """One paragraph the chat system prompt is built from."""
    kind: Literal["llm", "tool"] = "llm"
    concern: str = "domain"
    """``domain`` or one of the cross-cutting concerns (``security``, ``test``...)."""

    @property
    def cross_cutting(self) -> bool:
        return self.concern in CROSS_CUTTING_ORDER


def _role(name: str, title: str, focus: str, **kwargs: str) -> RoleSpec:
    return RoleSpec(name=name, title=title, focus=focus, **kwargs)  # type: ignore[arg-type]


def _catalog_roles() -> list[RoleSpec]:
    """The ``CATALOG_REVIEWERS`` roles: focus from the catalog entry's prompt, concern from its concern."""
    catalog = load_catalog()
    return [
        RoleSpec(name=key, title=title, focus=catalog[key].prompt, concern=catalog[key].concern)
        for key, title in CATALOG_REVIEWERS.items()
    ]


ROLES: dict[str, RoleSpec] = {
    role.name: role
    for role in (
        _role(
            "generator",
            "Generator",
            "You write complete, correct, production-ready Python implementations. You read the task and its tests "
            "carefully, handle edge cases, and prefer clear code over clever code. Your code is judged by running it.",
        ),
        _role(
            "implementer",
            "Implementer",
            "You turn the Designer's plan into concrete, complete code. You follow the plan's interfaces and "
            "contracts, and say so when the plan is wrong instead of silently deviating.",
        ),
        _role(
            "designer",
            "Designer",
            "You design before anyone codes: the approach, the helper functions and their contracts, the edge cases "
            "to handle, and the complexity to aim for. You write a short plan, not code.",
        ),
        _role(
            "refactorer",
            "Refactorer",
            "You improve structure without changing behaviour: remove duplication and smells, clarify names, "
            "simplify control flow. Every test that passes now must still pass.",
        ),
        _role(
            "performance_analyzer",
            "Performance Analyzer",
            "You find hot paths and wasted work and make the code faster or leaner in time and memory, "
            "without changing behaviour.",
        ),
        _role(
            "security",
            "Security Reviewer",
            "You look for vulnerabilities and unsafe behaviour: injection, eval/exec, unbounded resource use, "
            "unsafe deserialisation, missing input validation. You name the input that triggers each problem.",
            concern="security",
        ),
        *_catalog_roles(),
        _role(
            "teacher",
            "Teacher",
            "You explain decisions so a newcomer understands them: what approach was chosen, why it is correct, "
            "which alternatives were rejected and why.",
        ),
        _role(
            "compiler",
            "Compiler",
            "Validates syntax and builds: the code must compile before anything else is judged.",
            kind="tool",
        ),
        _role(
            "executor",
            "Executor",
            "Runs code in the sandbox and reports outputs, failures, timings and resource use.",
            kind="tool",
            concern="test",
        ),
        _role(
            "judge",
            "Judge",
            "You score solutions objectively against a rubric (correctness, edge cases, clarity, efficiency), "
            "each from 0 to 1, and say which candidate you would ship and why.",
        ),
        _role(
            "red",
            "Red Team",
            "You break solutions: adversarial inputs, edge cases, boundary values, malformed data, stress sizes and "
            "security probes. You write each attack as a pytest test with the behaviour the task requires.",
        ),
        _role(
            "blue",
            "Blue Team",
            "You defend solutions: for each failing attack you decide whether the attack is valid under the task, "
            "and if so patch the code, hardening edge cases without breaking anything that works.",
        ),
        _role(
            "contrarian",
            "Contrarian",
            "You deliberately argue the opposing position. You challenge assumptions and find failure modes, and "
            "prevent groupthink: if everyone agrees, you explain why they should not. You never rubber-stamp.",
        ),
        _role(
            "moonshot",
            "Moonshot",
            "You push for the ambitious version: more general, faster, more robust. You always give two versions: "
            "the moonshot, and a pragmatic stepping stone that can ship today.",
        ),
        _role(
            "moderator",
            "Moderator",
            "You run the debate: you answer clarifying questions from the task text, summarise rounds, notice when "
            "arguments go in circles, and state the positions plainly when the debate must escalate to a human.",
        ),
    )
}


def role_names() -> list[str]:
    return sorted(ROLES)


def get_role(name: str) -> RoleSpec:
    """The role called ``name``.

    Raises:
        KeyError: with the known role names.
    """
    try:
        return ROLES[name]
    except KeyError:
        raise KeyError(f"unknown role {name!r}; known roles: {', '.join(role_names())}") from None
