"""Voting methods by name, and the automatic choice by number of agents."""

from __future__ import annotations

from debatecode.voting.base import VotingMethod
from debatecode.voting.borda import Borda
from debatecode.voting.condorcet import Condorcet
from debatecode.voting.plurality import Plurality
from debatecode.voting.unanimous import Unanimous
from debatecode.voting.weighted import Weighted

__all__ = ["AUTO", "choose_method", "get_method", "method_names"]

AUTO = "auto"
"""The name that asks ``choose_method`` for the automatic choice."""

_METHODS: dict[str, type[VotingMethod]] = {cls.name: cls for cls in (Plurality, Borda, Condorcet, Unanimous, Weighted)}


def method_names() -> list[str]:
    """The registered method names, sorted."""
    return sorted(_METHODS)


def get_method(name: str) -> VotingMethod:
    """A new instance of the method called ``name`` (case-insensitive).

    Raises:
        ValueError: no method has that name; the message lists the known names.
    """
    key = name.strip().lower()
    try:
        return _METHODS[key]()
    except KeyError:
        raise ValueError(f"unknown voting method {name!r}; known methods: {', '.join(method_names())}") from None


def choose_method(n_agents: int, override: str | None = None) -> VotingMethod:
    """The voting method for ``n_agents`` voters, unless ``override`` names one.

    Automatic choice (``override`` is ``None`` or ``"auto"``): fewer than 3
    agents → unanimous, 3 to 5 → weighted, 6 or more → borda.

    Raises:
        ValueError: ``n_agents`` is below 1, or ``override`` is an unknown name.
    """
    if n_agents < 1:
        raise ValueError(f"a vote needs at least one agent, got {n_agents}")
    if override is not None and override.strip().lower() != AUTO:
        return get_method(override)
    if n_agents < 3:
        return Unanimous()
    if n_agents <= 5:
        return Weighted()
    return Borda()
