"""The 0-1 quality score: documented sub-scores, combined with configurable weights.

See ``QualitySettings`` for the formulas; this module is their one implementation.
"""

from __future__ import annotations

from debatecode.quality.report import ComplexityReport, LintReport, SecurityReport
from debatecode.quality.settings import QualitySettings

__all__ = [
    "combine",
    "complexity_subscore",
    "lint_subscore",
    "maintainability_subscore",
    "security_subscore",
]


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def lint_subscore(lint: LintReport, settings: QualitySettings) -> float:
    """``0.5 ** (findings / lint_half_findings)``: 1 with no finding, halved every ``lint_half_findings``."""
    return _clamp(0.5 ** (lint.count / settings.lint_half_findings))


def complexity_subscore(complexity: ComplexityReport, settings: QualitySettings) -> float:
    """1 up to ``complexity_ok``, then linear down to 0 at ``complexity_zero`` (most complex function)."""
    worst = complexity.max_complexity
    span = settings.complexity_zero - settings.complexity_ok
    return _clamp((settings.complexity_zero - worst) / span)


def maintainability_subscore(complexity: ComplexityReport) -> float | None:
    """Radon's maintainability index / 100, or None when it was not measured."""
    if complexity.maintainability_index is None:
        return None
    return _clamp(complexity.maintainability_index / 100.0)


def security_subscore(security: SecurityReport, settings: QualitySettings) -> float:
    """``0.5 ** (sum of severity points)``: one MEDIUM finding halves it with the default points."""
    points = sum(settings.security_points.get(f.severity, 0.0) for f in security.findings)  # type: ignore[call-overload]
    return _clamp(0.5**points)


def combine(components: dict[str, float], settings: QualitySettings) -> float:
    """The weighted mean of the measured ``components``; 0 when nothing with weight was measured."""
    weights = settings.weights()
    total = sum(weights[name] for name in components if name in weights)
    if total <= 0:
        return 0.0
    return _clamp(sum(weights[name] * value for name, value in components.items() if name in weights) / total)
