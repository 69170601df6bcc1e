"""Checking a candidate patch in solve mode: the repository's *existing* tests, in the instance sandbox.

The candidate goes through ``SWEBenchHarness.run_patch`` with its defaults:
applied at ``base_commit`` with ``apply_test_patch=False`` (the reference tree is
``base_commit`` alone, so the hidden ``test_patch`` never takes part), the
protected files (tests, pytest configuration) put back, and run with no test ids,
i.e. every test the repository already has. A candidate's evidence is its *regressions*: tests that
pass on the unpatched tree (the baseline, run once per instance) and do not pass
with the patch.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, Field

from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.grading import parse_junit
from debatecode.bench.swebench.harness import InstanceContext, SWEBenchHarness

__all__ = ["CandidateChecker", "CheckResult", "HarnessChecker", "regressions"]

CheckStatus = Literal["passed", "failed", "patch_failed", "no_results"]


class CheckResult(BaseModel):
    """What the existing tests said about one patch."""

    status: CheckStatus
    tests: dict[str, str] = Field(default_factory=dict)
    """``classname::name`` -> ``PASSED``, ``FAILED``, ``ERROR``, ``SKIPPED`` or ``XFAIL``."""
    exit_code: int | None = None
    output_tail: str = ""
    """The end of the run's output (the tests' own failure messages), for the agents to read."""

    @property
    def passed(self) -> int:
        """Tests that passed."""
        return sum(1 for status in self.tests.values() if status == "PASSED")

    @property
    def failing(self) -> list[str]:
        """Tests that failed or errored, sorted."""
        return sorted(name for name, status in self.tests.items() if status in ("FAILED", "ERROR"))


def regressions(baseline: CheckResult | None, result: CheckResult) -> list[str]:
    """Tests passing on the baseline that do not pass with the patch (every failing test without a baseline)."""
    if result.status == "patch_failed":
        return ["<the patch does not apply>"]
    if result.status == "no_results":
        return ["<the test run produced no results>"]
    if baseline is None:
        return result.failing
    return sorted(
        name for name, status in baseline.tests.items() if status == "PASSED" and result.tests.get(name) != "PASSED"
    )


class CandidateChecker(Protocol):
    """Runs the repository's existing tests on a patch of one instance.

    ``check(instance, "")`` is the baseline. Implementations raise:
        SandboxUnavailable: the engine does not answer (the run stops).
        UserError, RunError: this instance cannot be checked (its candidates go unchecked).
    """

    async def check(self, instance: SWEBenchInstance, patch: str) -> CheckResult: ...


class HarnessChecker:
    """``CandidateChecker`` through the grading harness: its images and ``run_patch``."""

    def __init__(self, harness: SWEBenchHarness) -> None:
        self.harness = harness
        self._contexts: dict[str, InstanceContext] = {}

    async def check(self, instance: SWEBenchInstance, patch: str) -> CheckResult:
        """Run every existing test of the repository with ``patch`` applied at ``base_commit``.

        Raises:
            SandboxUnavailable, ImageBuildError, SandboxError: the sandbox or an image failed.
            InstanceSetupError, VersionControlError: the tree could not be prepared.
        """
        if instance.instance_id not in self._contexts:
            self._contexts[instance.instance_id] = await self.harness.context(instance)
        context = self._contexts[instance.instance_id]
        prepared, run = await self.harness.run_patch(context, patch)
        if run is None or prepared.overlay is None:
            return CheckResult(status="patch_failed")
        parsed = parse_junit(run.junit_xml)
        tail = (run.stdout + run.stderr)[-3000:]
        if parsed is None:
            return CheckResult(status="no_results", exit_code=run.exit_code, output_tail=tail)
        tests = {f"{classname}::{name}": status for (classname, name), (status, _) in sorted(parsed.items())}
        failed = any(status in ("FAILED", "ERROR") for status in tests.values())
        return CheckResult(
            status="failed" if failed else "passed", tests=tests, exit_code=run.exit_code, output_tail=tail
        )
