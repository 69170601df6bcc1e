"""Validations at hook points inside a debate, and the same checks as git hooks for teams.

``HookValidator(settings, sandbox, task).run(point, code, report)`` validates a
version at ``HookPoint.POST_PROPOSAL`` and the other points; ``check_files``
runs the static validations on a repository's changed files. Everything is
imported on first use, so importing this package (or its settings) is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports
from debatecode.hooks.settings import GitHookSettings, HookPointSettings, HooksSettings, ValidationThresholds

if TYPE_CHECKING:
    from debatecode.hooks.check import FileCheck, check_files
    from debatecode.hooks.points import HookPoint, HookValidator
    from debatecode.hooks.results import HookOutcome, ValidationFinding, ValidationResult

__all__ = [
    "FileCheck",
    "GitHookSettings",
    "HookOutcome",
    "HookPoint",
    "HookPointSettings",
    "HookValidator",
    "HooksSettings",
    "ValidationFinding",
    "ValidationResult",
    "ValidationThresholds",
    "check_files",
]

_LAZY = {
    "FileCheck": "debatecode.hooks.check",
    "check_files": "debatecode.hooks.check",
    "HookPoint": "debatecode.hooks.points",
    "HookValidator": "debatecode.hooks.points",
    "HookOutcome": "debatecode.hooks.results",
    "ValidationFinding": "debatecode.hooks.results",
    "ValidationResult": "debatecode.hooks.results",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
