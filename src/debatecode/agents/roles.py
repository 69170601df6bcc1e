"""Roles: what an agent is for, in words a model reads.

A role names a stance and the prompts that carry it. The skeleton protocol
uses the ``generator`` role for every proposer; later phases add reviewers,
Red/Blue teams, the Contrarian and the Moonshot as further ``RoleSpec``s.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["ROLES", "RoleSpec", "get_role"]


class RoleSpec(BaseModel):
    """A role: its name, what it optimises for, and its system prompt focus."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str
    focus: str
    """One paragraph the chat system prompt is built from."""


ROLES: dict[str, RoleSpec] = {
    role.name: role
    for role in (
        RoleSpec(
            name="generator",
            title="Generator",
            focus=(
                "You write complete, correct, production-ready Python implementations. "
                "You read the task and its tests carefully, handle edge cases, and prefer "
                "clear code over clever code. Your code is judged by running it."
            ),
        ),
    )
}


def get_role(name: str) -> RoleSpec:
    """The role called ``name``.

    Raises:
        KeyError: with the known role names.
    """
    try:
        return ROLES[name]
    except KeyError:
        raise KeyError(f"unknown role {name!r}; known roles: {', '.join(sorted(ROLES))}") from None
