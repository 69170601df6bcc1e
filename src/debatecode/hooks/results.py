"""What validations report: ``ValidationResult`` per check, ``HookOutcome`` per hook point.

Both are pydantic models, so they persist as JSON (``HookOutcome.to_metadata()``)
in a turn's ``metadata`` or a version's ``metrics``, and render as feedback
text for agents (``HookOutcome.feedback()``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["HOOKS_SCHEMA_VERSION", "HookOutcome", "ValidationFinding", "ValidationResult"]

HOOKS_SCHEMA_VERSION = 1
_FINDINGS_IN_FEEDBACK = 8


class ValidationFinding(BaseModel):
    """One reason a validation failed (or a notable observation)."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    """``ruff``, ``radon``, ``bandit``, ``pytest`` or ``benchmark``."""
    rule: str
    """The tool's rule or test id (``F401``, ``B307``, ``cc``, ``mi``), or a test's outcome."""
    message: str
    line: int | None = None
    severity: str | None = None
    """Bandit's severity and confidence (``MEDIUM/HIGH``), when the tool has one."""

    def describe(self) -> str:
        """The finding as one line of feedback."""
        where = f"line {self.line}: " if self.line else ""
        severity = f" ({self.severity})" if self.severity else ""
        return f"{where}{self.tool} {self.rule}{severity}: {self.message}"


class ValidationResult(BaseModel):
    """The outcome of one validation on one version."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """``tests``, ``lint``, ``static_analysis``, ``security`` or ``benchmark``."""
    passed: bool
    blocking: bool = False
    """Whether failing it prevents convergence on the version (or blocks the commit, in a git hook)."""
    summary: str = ""
    """One line: what was checked and what was found."""
    findings: list[ValidationFinding] = Field(default_factory=list)
    """Why it failed; empty when it passed."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Numbers behind the verdict (counts, timings)."""
    duration_s: float = 0.0

    @property
    def blocks(self) -> bool:
        """Failed and blocking."""
        return self.blocking and not self.passed

    def feedback(self) -> str:
        """The result as feedback text for an agent (a heading line, then the findings)."""
        verdict = "passed" if self.passed else ("FAILED (blocking)" if self.blocking else "failed")
        lines = [f"- {self.name}: {verdict}. {self.summary}".rstrip()]
        for finding in self.findings[:_FINDINGS_IN_FEEDBACK]:
            lines.append(f"    {finding.describe()}")
        if len(self.findings) > _FINDINGS_IN_FEEDBACK:
            lines.append(f"    ... and {len(self.findings) - _FINDINGS_IN_FEEDBACK} more")
        return "\n".join(lines)


class HookOutcome(BaseModel):
    """Every validation of one hook point on one version."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = HOOKS_SCHEMA_VERSION
    point: str
    """``post_proposal``, ``post_optimization``, ``post_adversarial`` or ``post_convergence``."""
    results: list[ValidationResult] = Field(default_factory=list)
    quality_score: float | None = None
    """The version's quality score, when the static validations measured it."""
    duration_s: float = 0.0

    @property
    def passed(self) -> bool:
        """Every validation passed (vacuously true when none ran)."""
        return all(result.passed for result in self.results)

    @property
    def blocked(self) -> bool:
        """A blocking validation failed: the debate must not converge on this version."""
        return any(result.blocks for result in self.results)

    def blocking_failures(self) -> list[ValidationResult]:
        """The failed blocking validations."""
        return [result for result in self.results if result.blocks]

    def failures(self) -> list[ValidationResult]:
        """Every failed validation, blocking or not."""
        return [result for result in self.results if not result.passed]

    def feedback(self) -> str:
        """Feedback text for the agent who wrote the version; empty when everything passed."""
        failed = self.failures()
        if not failed:
            return ""
        label = self.point.replace("_", " ")
        blocking = len(self.blocking_failures())
        head = f"Automated checks after {label.removeprefix('post ')}: {len(failed)} of {len(self.results)} failed"
        head += f" ({blocking} blocking)." if blocking else "."
        lines = [head, *(result.feedback() for result in failed)]
        if blocking:
            lines.append(
                "A version that fails a blocking check cannot be chosen as the final answer; "
                "fix these findings in your next revision."
            )
        return "\n".join(lines)

    def to_metadata(self) -> dict[str, Any]:
        """The outcome as JSON, for a turn's ``metadata["hooks"][point]`` or a version's ``metrics["hooks"][point]``."""
        data = self.model_dump(mode="json")
        data["passed"] = self.passed
        data["blocked"] = self.blocked
        return data

    @classmethod
    def from_metadata(cls, data: dict[str, Any]) -> HookOutcome:
        """Rebuild an outcome stored by ``to_metadata`` (a resumed session replays it).

        Raises:
            pydantic.ValidationError: ``data`` is not a stored outcome.
        """
        return cls.model_validate({k: v for k, v in data.items() if k not in ("passed", "blocked")})
