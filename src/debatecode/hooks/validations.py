"""The validations: verdicts from a ``QualityReport`` (static) or from sandbox runs (tests, benchmark).

The static ones (``lint``, ``static_analysis``, ``security``) read findings the
quality layer already collected with ruff, radon and bandit; they never run
the code. ``tests`` and ``benchmark`` judge ``TestReport``s from sandbox runs.
"""

from __future__ import annotations

import statistics

from debatecode.execution.results import TestReport
from debatecode.hooks.results import ValidationFinding, ValidationResult
from debatecode.hooks.settings import ValidationThresholds
from debatecode.quality.report import QualityReport

__all__ = ["benchmark_result", "lint_result", "security_result", "static_analysis_result", "tests_result"]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def lint_result(quality: QualityReport, thresholds: ValidationThresholds) -> ValidationResult:
    """``lint``: ruff findings (at most ``lint_max_findings``) and, if required, formatting."""
    if "ruff" in quality.tool_errors:
        return ValidationResult(
            name="lint",
            passed=False,
            summary="ruff could not run",
            findings=[ValidationFinding(tool="ruff", rule="error", message=quality.tool_errors["ruff"])],
        )
    lint = quality.lint
    findings = [ValidationFinding(tool="ruff", rule=f.rule, message=f.message, line=f.line) for f in lint.findings]
    passed = lint.count <= thresholds.lint_max_findings
    if thresholds.lint_require_formatted and lint.formatted is False:
        passed = False
        findings.append(ValidationFinding(tool="ruff", rule="format", message="`ruff format` would reformat the code"))
    summary = f"{_plural(lint.count, 'ruff finding')} (at most {thresholds.lint_max_findings} allowed)"
    if lint.formatted is False:
        summary += "; not formatted"
    return ValidationResult(
        name="lint",
        passed=passed,
        summary=summary,
        findings=[] if passed else findings,
        details={"by_rule": lint.by_rule, "formatted": lint.formatted},
    )


def static_analysis_result(quality: QualityReport, thresholds: ValidationThresholds) -> ValidationResult:
    """``static_analysis``: radon's complexity per function and maintainability index against the thresholds."""
    complexity = quality.complexity
    findings: list[ValidationFinding] = []
    if quality.parse_error:
        findings.append(ValidationFinding(tool="python", rule="syntax", message=quality.parse_error))
    if "radon" in quality.tool_errors:
        findings.append(ValidationFinding(tool="radon", rule="error", message=quality.tool_errors["radon"]))
    for function in complexity.functions:
        if function.complexity > thresholds.max_complexity:
            findings.append(
                ValidationFinding(
                    tool="radon",
                    rule="cc",
                    line=function.line,
                    message=f"{function.kind} {function.name} has cyclomatic complexity {function.complexity} "
                    f"(rank {function.rank}), above {thresholds.max_complexity}; split it into smaller functions",
                )
            )
    mi = complexity.maintainability_index
    if mi is not None and mi < thresholds.min_maintainability:
        findings.append(
            ValidationFinding(
                tool="radon",
                rule="mi",
                message=f"maintainability index {mi:.1f} (rank {complexity.maintainability_rank}) "
                f"is below {thresholds.min_maintainability:g}",
            )
        )
    summary = (
        f"max cyclomatic complexity {complexity.max_complexity} (limit {thresholds.max_complexity})"
        + (f", maintainability index {mi:.0f}" if mi is not None else "")
        if not quality.parse_error
        else "the code does not parse"
    )
    return ValidationResult(
        name="static_analysis",
        passed=not findings,
        summary=summary,
        findings=findings,
        details={
            "max_complexity": complexity.max_complexity,
            "max_rank": complexity.max_rank,
            "maintainability_index": mi,
            "sloc": complexity.raw.sloc,
        },
    )


def security_result(quality: QualityReport, thresholds: ValidationThresholds) -> ValidationResult:
    """``security``: fails on bandit findings at or above the severity and confidence thresholds."""
    if "bandit" in quality.tool_errors or quality.parse_error:
        reason = (
            quality.tool_errors.get("bandit") or f"bandit cannot scan code that does not parse ({quality.parse_error})"
        )
        return ValidationResult(
            name="security",
            passed=False,
            summary="bandit could not scan the code",
            findings=[ValidationFinding(tool="bandit", rule="error", message=reason)],
        )
    severity, confidence = thresholds.security_min_severity, thresholds.security_min_confidence
    failing = [f for f in quality.security.findings if f.at_least(severity, confidence)]
    findings = [
        ValidationFinding(
            tool="bandit",
            rule=f.test_id,
            message=f.message,
            line=f.line,
            severity=f"{f.severity} severity, {f.confidence} confidence",
        )
        for f in failing
    ]
    below = len(quality.security.findings) - len(failing)
    summary = f"{_plural(len(failing), 'bandit finding')} at or above {severity} severity and {confidence} confidence"
    if below:
        summary += f" ({below} lower ones not counted)"
    return ValidationResult(
        name="security",
        passed=not failing,
        summary=summary,
        findings=findings,
        details={"by_severity": quality.security.by_severity, "by_confidence": quality.security.by_confidence},
    )


def tests_result(report: TestReport) -> ValidationResult:
    """``tests``: passes when every test of the task passes."""
    findings = [
        ValidationFinding(tool="pytest", rule=case.outcome, message=f"{case.name}: {case.message}".strip()[:400])
        for case in report.failures()
    ]
    return ValidationResult(
        name="tests",
        passed=report.all_passed,
        summary=f"{report.passed}/{report.total} tests pass",
        findings=findings,
        details={"passed": report.passed, "total": report.total, "status": report.status},
    )


def benchmark_result(runs: list[TestReport], thresholds: ValidationThresholds) -> ValidationResult:
    """``benchmark``: the median time the candidate spent in the task's tests over ``runs``.

    The time of a run is the sum of its tests' durations as measured inside
    the sandbox (interpreter start-up and collection excluded).
    """
    findings: list[ValidationFinding] = []
    for number, run in enumerate(runs, start=1):
        if run.status in ("timeout", "oom"):
            findings.append(
                ValidationFinding(tool="benchmark", rule=run.status, message=f"run {number} ended with {run.status}")
            )
    test_times = [sum(case.duration_s for case in run.cases) for run in runs]
    median = statistics.median(test_times) if test_times else 0.0
    wall = statistics.median(run.duration_s for run in runs) if runs else 0.0
    limit = thresholds.benchmark_max_s
    if limit is not None and median > limit:
        findings.append(
            ValidationFinding(
                tool="benchmark",
                rule="too_slow",
                message=f"the task's tests took {median:.4f}s of candidate time, above the limit of {limit:g}s",
            )
        )
    all_pass = all(run.all_passed for run in runs)
    summary = f"median {median:.4f}s in the task's tests over {_plural(len(runs), 'run')}"
    if not all_pass:
        summary += " (some tests fail, so the timing covers failing code)"
    per_test: dict[str, float] = {}
    for name in {case.name for run in runs for case in run.cases}:
        times = [case.duration_s for run in runs for case in run.cases if case.name == name]
        per_test[name] = round(statistics.median(times), 6)
    return ValidationResult(
        name="benchmark",
        passed=not findings,
        summary=summary,
        findings=findings,
        details={
            "runs": len(runs),
            "test_time_s": round(median, 6),
            "wall_time_s": round(wall, 4),
            "per_test_s": dict(sorted(per_test.items())),
            "all_tests_passed": all_pass,
            "limit_s": limit,
        },
    )
