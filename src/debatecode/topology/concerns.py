"""Which concern a role serves, and which concern leads each protocol phase.

A tree groups agents into teams by concern. Role names are compared
normalised: lower case, with spaces, hyphens and underscores removed, so
``performance_analyzer``, ``Performance Analyzer`` and ``PerformanceAnalyzer``
are the same role.

Concerns, in the order their teams hang under the root, and the roles in each
(the earliest-listed role present leads the team):

==============  ==========================================================
design          lead, architect, designer, moderator (root candidates)
implementation  implementer, generator
verification    judge, executor, compiler, test, tester
quality         reviewer, refactorer, performance_analyzer, teacher, observability, operations
security        security, red, blue
perspective     contrarian, moonshot
general         any other role
==============  ==========================================================

Phase → concern (``select_leader``): dehallucination → design,
self_evolvement → implementation, proposal → implementation, critique →
verification, review → quality, optimization → quality, adversarial →
security, convergence → design.
"""

from __future__ import annotations

import re

__all__ = [
    "CONCERNS",
    "CONCERN_ROLES",
    "GENERAL",
    "PHASE_CONCERNS",
    "ROOT_ROLES",
    "normalise_phase",
    "normalise_role",
    "role_concern",
    "role_rank",
]

GENERAL = "general"

CONCERN_ROLES: dict[str, tuple[str, ...]] = {
    "design": ("lead", "architect", "designer", "moderator"),
    "implementation": ("implementer", "generator"),
    "verification": ("judge", "executor", "compiler", "test", "tester"),
    "quality": ("reviewer", "refactorer", "performanceanalyzer", "teacher", "observability", "operations"),
    "security": ("security", "red", "blue"),
    "perspective": ("contrarian", "moonshot"),
    GENERAL: (),
}
"""Roles per concern (normalised), in team-lead preference order."""

CONCERNS: tuple[str, ...] = tuple(CONCERN_ROLES)
"""Every concern, in the order teams are placed under the root."""

ROOT_ROLES: tuple[str, ...] = CONCERN_ROLES["design"]
"""Roles that may be the root, in preference order; without any, the first agent is the root."""

PHASE_CONCERNS: dict[str, str] = {
    "dehallucination": "design",
    "self_evolvement": "implementation",
    "proposal": "implementation",
    "critique": "verification",
    "review": "quality",
    "optimization": "quality",
    "adversarial": "security",
    "convergence": "design",
}
"""The concern responsible for each protocol phase."""

_ROLE_CONCERN = {role: concern for concern, roles in CONCERN_ROLES.items() for role in roles}


def normalise_role(role: str) -> str:
    """``role`` in lower case without spaces, hyphens or underscores."""
    return re.sub(r"[\s_\-]+", "", role).lower()


def normalise_phase(phase: str) -> str:
    """``phase`` in lower case with spaces and hyphens as underscores (``self-evolvement`` → ``self_evolvement``)."""
    return re.sub(r"[\s\-]+", "_", phase.strip()).lower()


def role_concern(role: str) -> str:
    """The concern ``role`` serves; ``general`` for roles not listed."""
    return _ROLE_CONCERN.get(normalise_role(role), GENERAL)


def role_rank(role: str) -> int:
    """Team-lead preference of ``role`` inside its concern (lower leads); unlisted roles rank last."""
    normalised = normalise_role(role)
    roles = CONCERN_ROLES[role_concern(role)]
    return roles.index(normalised) if normalised in roles else len(roles)
