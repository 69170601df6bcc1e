"""``QualityReport``: what ruff, radon and bandit found in one code version, and its score.

The report is stored as JSON in ``code_versions.metrics`` (``to_metrics()``),
beside the row's ``quality_score`` and ``test_pass_rate``. It carries
``schema_version`` so stored reports keep loading when it grows.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from debatecode.quality.settings import Severity

__all__ = [
    "QUALITY_SCHEMA_VERSION",
    "ComplexityReport",
    "FunctionComplexity",
    "LintFinding",
    "LintReport",
    "QualityReport",
    "RawMetrics",
    "SecurityFinding",
    "SecurityReport",
]

QUALITY_SCHEMA_VERSION = 1

_SEVERITY_ORDER: dict[str, int] = {"UNDEFINED": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3}


class LintFinding(BaseModel):
    """One ruff diagnostic."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    """Ruff rule code (``F401``), or ``invalid-syntax`` when the code does not parse."""
    name: str = ""
    """Ruff's name for the rule (``unused-import``)."""
    message: str
    line: int | None = None
    column: int | None = None
    fixable: bool = False
    """Whether ``ruff check --fix`` can fix it."""


class LintReport(BaseModel):
    """Ruff's lint findings and whether ``ruff format`` would change the code."""

    model_config = ConfigDict(extra="forbid")

    findings: list[LintFinding] = Field(default_factory=list)
    by_rule: dict[str, int] = Field(default_factory=dict)
    """Number of findings per rule code."""
    formatted: bool | None = None
    """True when ``ruff format --check`` passes; None when ruff could not parse the code."""
    format_diff: str = ""
    """The diff ``ruff format`` would apply (capped)."""

    @property
    def count(self) -> int:
        return len(self.findings)


class FunctionComplexity(BaseModel):
    """Radon's cyclomatic complexity of one function, method or closure."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """Qualified name (``Class.method``, ``outer.inner``)."""
    kind: str
    """``function``, ``method`` or ``closure``."""
    line: int
    end_line: int
    complexity: int
    rank: str
    """Radon's rank: A (1-5), B (6-10), C (11-20), D (21-30), E (31-40), F (41+)."""


class RawMetrics(BaseModel):
    """Radon's raw line counts."""

    model_config = ConfigDict(extra="forbid")

    loc: int = 0
    """Lines of code, all lines."""
    lloc: int = 0
    """Logical lines of code."""
    sloc: int = 0
    """Source lines of code (non-blank, non-comment)."""
    comments: int = 0
    multi: int = 0
    """Lines in multi-line strings."""
    blank: int = 0
    single_comments: int = 0


class ComplexityReport(BaseModel):
    """Radon's cyclomatic complexity, maintainability index and raw metrics."""

    model_config = ConfigDict(extra="forbid")

    functions: list[FunctionComplexity] = Field(default_factory=list)
    average_complexity: float = 0.0
    max_complexity: int = 0
    """Complexity of the most complex function; 0 when there is none."""
    max_rank: str = "A"
    maintainability_index: float | None = None
    """Radon's maintainability index, 0-100 (higher is better); None when the code does not parse."""
    maintainability_rank: str | None = None
    """A (20-100), B (10-19), C (0-9)."""
    raw: RawMetrics = Field(default_factory=RawMetrics)


class SecurityFinding(BaseModel):
    """One bandit issue."""

    model_config = ConfigDict(extra="forbid")

    test_id: str
    """Bandit test id (``B307``)."""
    test_name: str = ""
    severity: str
    """LOW, MEDIUM or HIGH."""
    confidence: str
    """LOW, MEDIUM or HIGH."""
    message: str
    line: int | None = None
    cwe: int | None = None
    more_info: str = ""

    def at_least(self, severity: Severity, confidence: Severity) -> bool:
        """Whether this finding is at or above both thresholds."""
        return (
            _SEVERITY_ORDER.get(self.severity, 0) >= _SEVERITY_ORDER[severity]
            and _SEVERITY_ORDER.get(self.confidence, 0) >= _SEVERITY_ORDER[confidence]
        )


class SecurityReport(BaseModel):
    """Bandit's findings, with counts by severity and by confidence."""

    model_config = ConfigDict(extra="forbid")

    findings: list[SecurityFinding] = Field(default_factory=list)
    by_severity: dict[str, int] = Field(default_factory=lambda: {"LOW": 0, "MEDIUM": 0, "HIGH": 0})
    by_confidence: dict[str, int] = Field(default_factory=lambda: {"LOW": 0, "MEDIUM": 0, "HIGH": 0})
    skipped: str | None = None
    """Why bandit could not scan the code (a syntax error), if it could not."""


class QualityReport(BaseModel):
    """Everything measured about one code version, and its 0-1 score."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = QUALITY_SCHEMA_VERSION
    score: float
    """Weighted mean of ``components`` (see ``QualitySettings``), 0-1."""
    components: dict[str, float] = Field(default_factory=dict)
    """Each measured sub-score (0-1) by name; a sub-score that could not be measured is absent."""
    weights: dict[str, float] = Field(default_factory=dict)
    """The weights the score was computed with."""
    test_pass_rate: float | None = None
    lint: LintReport = Field(default_factory=LintReport)
    complexity: ComplexityReport = Field(default_factory=ComplexityReport)
    security: SecurityReport = Field(default_factory=SecurityReport)
    parse_error: str | None = None
    """Python's syntax error for code that does not parse (radon and bandit then measure nothing)."""
    tool_errors: dict[str, str] = Field(default_factory=dict)
    """A tool that failed to run, by name, and why. Its sub-scores are absent."""
    tools: dict[str, str] = Field(default_factory=dict)
    """Versions of the tools that produced the report."""
    duration_s: float = 0.0
    """Time the analysis took on the host."""

    def to_metrics(self) -> dict[str, Any]:
        """The report as JSON for ``code_versions.metrics``."""
        return {"quality": self.model_dump(mode="json")}

    @classmethod
    def from_metrics(cls, metrics: dict[str, Any]) -> QualityReport | None:
        """The report stored by ``to_metrics``, or None when ``metrics`` holds none."""
        data = metrics.get("quality")
        return cls.model_validate(data) if isinstance(data, dict) else None

    def summary(self) -> str:
        """One line for logs and prompts."""
        parts = [f"quality {self.score:.2f}"]
        parts.append(f"{self.lint.count} lint finding{'s' if self.lint.count != 1 else ''}")
        if self.lint.formatted is False:
            parts.append("not formatted")
        if self.complexity.functions:
            parts.append(f"max complexity {self.complexity.max_complexity} ({self.complexity.max_rank})")
        if self.complexity.maintainability_index is not None:
            parts.append(f"MI {self.complexity.maintainability_index:.0f}")
        security = len(self.security.findings)
        parts.append(f"{security} security finding{'s' if security != 1 else ''}")
        if self.parse_error:
            parts.append("does not parse")
        return ", ".join(parts)
