"""Settings of the quality layer (the ``[quality]`` section of ``debatecode.toml``).

The score of a code version is a weighted mean of sub-scores, each between 0
and 1::

    tests            the test pass rate
    lint             0.5 ** (ruff findings / lint_half_findings)
    format           1 when ``ruff format`` would leave the code unchanged, else 0
    complexity       1 up to complexity_ok, falling linearly to 0 at complexity_zero
                     (radon's cyclomatic complexity of the most complex function)
    maintainability  radon's maintainability index / 100
    security         0.5 ** (sum of bandit severity points)

A sub-score that cannot be measured (no test run yet, a tool that failed) is
left out and the remaining weights are renormalised, so the score always stays
between 0 and 1. Code that does not parse scores 0 on format, complexity,
maintainability and security.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["COMPONENTS", "QualitySettings", "Severity"]

Severity = Literal["LOW", "MEDIUM", "HIGH"]
COMPONENTS = ("tests", "lint", "format", "complexity", "maintainability", "security")
"""The sub-scores of a quality score, in the order reports list them."""


def _default_security_points() -> dict[Severity, float]:
    return {"LOW": 0.25, "MEDIUM": 1.0, "HIGH": 2.0}


class QualitySettings(BaseModel):
    """How each code version's quality is measured (ruff, radon, bandit) and scored (0-1)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    enabled: bool = True
    """Measure every code version. Off leaves ``quality_score`` empty and ``metrics`` without a report."""
    weight_tests: float = Field(default=0.40, ge=0)
    """Weight of the test pass rate in the score."""
    weight_lint: float = Field(default=0.15, ge=0)
    """Weight of the ruff lint sub-score."""
    weight_format: float = Field(default=0.05, ge=0)
    """Weight of the formatting sub-score (``ruff format --check``)."""
    weight_complexity: float = Field(default=0.15, ge=0)
    """Weight of the cyclomatic-complexity sub-score (radon, most complex function)."""
    weight_maintainability: float = Field(default=0.10, ge=0)
    """Weight of radon's maintainability index (divided by 100)."""
    weight_security: float = Field(default=0.15, ge=0)
    """Weight of the bandit security sub-score."""
    lint_half_findings: float = Field(default=5.0, gt=0)
    """Number of ruff findings that halves the lint sub-score: ``lint = 0.5 ** (findings / lint_half_findings)``."""
    complexity_ok: int = Field(default=5, ge=1)
    """Cyclomatic complexity up to which the complexity sub-score is 1 (radon rank A ends at 5)."""
    complexity_zero: int = Field(default=30, ge=2)
    """Cyclomatic complexity at and above which the complexity sub-score is 0 (radon rank D ends at 30)."""
    security_points: dict[Severity, float] = Field(default_factory=_default_security_points)
    """Points per bandit finding by severity; ``security = 0.5 ** (sum of points)``, so one MEDIUM finding halves it."""
    ruff_select: list[str] = Field(default_factory=lambda: ["E", "F", "W", "B", "SIM", "UP"])
    """Ruff rule codes or prefixes checked with the built-in configuration."""
    line_length: int = Field(default=100, ge=40, le=400)
    """Line length for ruff's lint (E501) and format check with the built-in configuration."""
    ruff_config: Literal["builtin", "project"] = "builtin"
    """``builtin``: ruff runs isolated with ``ruff_select`` and ``line_length``, so results never depend on the folder it runs in. ``project``: ruff reads the configuration it finds from the file's path (``pyproject.toml``, ``ruff.toml``), falling back to ruff's defaults."""
    bandit_skip: list[str] = Field(default_factory=lambda: ["B101"])
    """Bandit test ids never run (B101 flags every ``assert``, which candidate code uses legitimately)."""
    honour_suppressions: bool = False
    """Whether ``# noqa`` and ``# nosec`` comments in the analysed code silence findings. Off for debate candidates: an agent must not silence the checks that judge it."""
    tool_timeout_s: float = Field(default=30.0, gt=0)
    """Time limit of one ruff run, in seconds."""

    @model_validator(mode="after")
    def _check_ranges(self) -> QualitySettings:
        if self.complexity_zero <= self.complexity_ok:
            raise ValueError("complexity_zero must be greater than complexity_ok")
        if sum(self.weights().values()) <= 0:
            raise ValueError("at least one quality weight must be positive")
        return self

    def weights(self) -> dict[str, float]:
        """The weight of each sub-score, by name (see ``COMPONENTS``)."""
        return {name: float(getattr(self, f"weight_{name}")) for name in COMPONENTS}
