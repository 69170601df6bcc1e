"""Hook points inside a debate and the ``HookValidator`` that validates a version at each.

The engine calls ``HookValidator.run(point, code, report)`` after a proposal,
an optimization, an adversarial exchange and on the converged version. The
validator executes the point's configured validations: static ones on the host
(ruff, radon, bandit through ``debatecode.quality``; the code is never run),
``tests`` and ``benchmark`` in the session's sandbox. The ``HookOutcome`` says
what failed, whether it blocks convergence, and gives feedback for agents.
"""

from __future__ import annotations

import enum
import logging
import time

from debatecode.execution.results import TestReport
from debatecode.execution.tester import CandidateTester
from debatecode.hooks.results import HookOutcome, ValidationResult
from debatecode.hooks.settings import STATIC_VALIDATIONS, HooksSettings, ValidationName
from debatecode.hooks.validations import (
    benchmark_result,
    lint_result,
    security_result,
    static_analysis_result,
    tests_result,
)
from debatecode.quality.analyzer import analyze_async
from debatecode.quality.report import QualityReport
from debatecode.quality.settings import QualitySettings
from debatecode.sandbox.base import Sandbox
from debatecode.sandbox.settings import SandboxSettings
from debatecode.task import Task

__all__ = ["HookPoint", "HookValidator", "run_static_validations"]

logger = logging.getLogger(__name__)


class HookPoint(enum.StrEnum):
    """Where in a debate validations run; the value is the settings key (``[hooks.post_proposal]``)."""

    POST_PROPOSAL = "post_proposal"
    """After a proposal has been written and tested."""
    POST_OPTIMIZATION = "post_optimization"
    """After an optimization revision."""
    POST_ADVERSARIAL = "post_adversarial"
    """After a Red/Blue adversarial exchange."""
    POST_CONVERGENCE = "post_convergence"
    """On the version the debate converged on."""


def run_static_validations(
    names: list[ValidationName], quality: QualityReport, settings: HooksSettings, blocking: list[ValidationName]
) -> list[ValidationResult]:
    """The static validations among ``names``, judged from ``quality`` (no code runs)."""
    judges = {"lint": lint_result, "static_analysis": static_analysis_result, "security": security_result}
    results = []
    for name in names:
        if name in STATIC_VALIDATIONS:
            result = judges[name](quality, settings.thresholds)
            results.append(result.model_copy(update={"blocking": name in blocking}))
    return results


class HookValidator:
    """Runs the configured validations of each hook point for one task in one sandbox."""

    def __init__(
        self,
        settings: HooksSettings,
        sandbox: Sandbox,
        task: Task,
        *,
        quality_settings: QualitySettings | None = None,
        sandbox_settings: SandboxSettings | None = None,
    ) -> None:
        self.settings = settings
        self.quality_settings = quality_settings or QualitySettings()
        self.tests = CandidateTester(task, sandbox, sandbox_settings or SandboxSettings())

    def validations(self, point: HookPoint | str) -> list[ValidationName]:
        """The validations ``point`` runs (none when hooks are disabled).

        Raises:
            ValueError: ``point`` is not a hook point.
        """
        point = HookPoint(point)
        if not self.settings.enabled:
            return []
        return list(self.settings.point(point.value).validations)

    async def run(
        self,
        point: HookPoint | str,
        code: str,
        report: TestReport | None = None,
        *,
        quality: QualityReport | None = None,
    ) -> HookOutcome:
        """Validate one version of the code at ``point``.

        ``report`` is the version's test report when the engine already ran
        the task's tests: ``tests`` then reuses it instead of running them
        again. ``quality`` likewise spares the static analysis; without it,
        ``analyze`` runs here (with ``report``'s pass rate, if any).

        Raises:
            ValueError: ``point`` is not a hook point.
            SandboxError: the sandbox failed while running ``tests`` or ``benchmark``
                (the code's own failures are results, not errors).
        """
        point = HookPoint(point)
        started = time.perf_counter()
        names = self.validations(point)
        config = self.settings.point(point.value)
        if quality is None and any(name in STATIC_VALIDATIONS for name in names):
            quality = await analyze_async(
                code,
                test_pass_rate=report.pass_rate if report is not None and report.total else None,
                settings=self.quality_settings,
            )
        results: list[ValidationResult] = []
        for name in names:
            step = time.perf_counter()
            if name in STATIC_VALIDATIONS:
                assert quality is not None  # analysed above whenever a static validation is configured
                result = run_static_validations([name], quality, self.settings, config.blocking)[0]
            elif name == "tests":
                if report is None:
                    report = await self.tests.run(code)
                result = tests_result(report)
            else:
                runs = [await self.tests.run(code) for _ in range(self.settings.thresholds.benchmark_runs)]
                result = benchmark_result(runs, self.settings.thresholds)
            results.append(
                result.model_copy(
                    update={"blocking": name in config.blocking, "duration_s": round(time.perf_counter() - step, 4)}
                )
            )
        outcome = HookOutcome(
            point=point.value,
            results=results,
            quality_score=quality.score if quality is not None else None,
            duration_s=round(time.perf_counter() - started, 4),
        )
        if outcome.blocked:
            logger.info(
                "%s: blocking validation failed: %s",
                point.value,
                ", ".join(r.name for r in outcome.blocking_failures()),
            )
        return outcome
