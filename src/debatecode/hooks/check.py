"""``check_files``: the git hook's validations (lint, complexity, security) on changed Python files.

No LLM and no sandbox: each file is analysed on the host by ruff, radon and
bandit (``debatecode.quality.analyzer``, which never runs the code) and judged
with the same thresholds as the debate's hook points.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from debatecode.hooks.git import SourceFile
from debatecode.hooks.points import run_static_validations
from debatecode.hooks.results import ValidationResult
from debatecode.hooks.settings import HooksSettings
from debatecode.quality.analyzer import analyze
from debatecode.quality.report import QualityReport
from debatecode.quality.settings import QualitySettings

__all__ = ["FileCheck", "check_files"]


@dataclass(frozen=True, slots=True)
class FileCheck:
    """The validations of one file."""

    path: str
    results: list[ValidationResult]
    quality: QualityReport

    @property
    def blocked(self) -> bool:
        """A blocking validation failed on this file."""
        return any(result.blocks for result in self.results)

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)


def check_files(
    files: list[SourceFile],
    hooks: HooksSettings | None = None,
    quality: QualitySettings | None = None,
    *,
    root: Path | None = None,
) -> list[FileCheck]:
    """Validate each file with ``hooks.git``'s validations; ``root`` is where their paths are relative to.

    Ruff and suppression comments follow ``hooks.git`` (by default the
    repository's own ruff configuration, and ``# noqa`` / ``# nosec`` honoured).
    """
    hooks = hooks or HooksSettings()
    git = hooks.git
    settings = (quality or QualitySettings()).model_copy(
        update={"ruff_config": git.ruff_config, "honour_suppressions": git.honour_suppressions}
    )
    checks = []
    for source in files:
        report = analyze(source.code, test_pass_rate=None, settings=settings, filename=source.path, cwd=root)
        results = run_static_validations(list(git.validations), report, hooks, list(git.blocking))
        checks.append(FileCheck(source.path, results, report))
    return checks
