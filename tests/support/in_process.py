"""In-process stand-ins for a code debate's test services, for unit tests of one phase. TEST-ONLY.

``InProcessTests`` plays :class:`~debatecode.execution.tester.CandidateTester` and
``InProcessProbes`` plays :class:`~debatecode.execution.probes.Prober`:
they ``exec`` the candidate in this process, with no sandbox, no subprocess
and no isolation at all, so they must only ever run code the tests themselves
scripted. ``MemoryWorktree`` plays the session's git worktree: versions are
kept in a dict, no repository is made.

The test files are the ones the real tester sends (``build_test_files``), so
suites and test names match a sandbox run's.
"""

from __future__ import annotations

import hashlib
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from debatecode.execution.generated import GeneratedSuite
from debatecode.execution.probes import ProbeResult
from debatecode.execution.results import TestCaseResult, TestReport
from debatecode.execution.testfiles import SOLUTION_FILE, build_test_files
from debatecode.task import Task

__all__ = ["InProcessProbes", "InProcessTests", "MemoryWorktree"]


@contextmanager
def _solution(code: str) -> Iterator[types.ModuleType]:
    """``code`` as the module ``solution`` (what the generated test files import), for the block's length."""
    module = types.ModuleType("solution")
    exec(compile(code, SOLUTION_FILE, "exec"), module.__dict__)
    saved = sys.modules.get("solution")
    sys.modules["solution"] = module
    try:
        yield module
    finally:
        if saved is None:
            sys.modules.pop("solution", None)
        else:
            sys.modules["solution"] = saved


class InProcessTests:
    """Runs a task's checks and the generated suites against a candidate in this process."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.runs: list[tuple[str, tuple[str, ...]]] = []
        """Every run: the code and the suites' names."""

    async def run(self, code: str, extra: tuple[GeneratedSuite, ...] = ()) -> TestReport:
        self.runs.append((code, tuple(s.suite for s in extra)))
        suite_of = {s.filename: s.suite for s in extra}
        files = build_test_files(self.task, code, extra)
        try:
            context = _solution(code)
            context.__enter__()
        except Exception as exc:  # the candidate does not import: every test errors, as in the sandbox
            names = [name for s in extra for name in s.names]
            reason = f"{type(exc).__name__}: {exc}"
            return TestReport(
                cases=[
                    TestCaseResult(name=n, outcome="error", message=reason) for n in [*self.task.test_names, *names]
                ],
                status="ok",
            )
        try:
            cases = [
                case
                for filename, source in files.items()
                if filename != SOLUTION_FILE
                for case in _run_module(filename, source, suite_of.get(filename, "visible"))
            ]
        finally:
            context.__exit__(None, None, None)
        return TestReport(cases=cases, backend="in-process", status="ok")

    def no_code_report(self, reason: str) -> TestReport:
        return TestReport(
            cases=[TestCaseResult(name=name, outcome="error", message=reason) for name in self.task.test_names],
            status="skipped",
            output=reason,
        )


def _run_module(filename: str, source: str, suite: str) -> list[TestCaseResult]:
    namespace: dict[str, Any] = {"__name__": filename.removesuffix(".py")}
    exec(compile(source, filename, "exec"), namespace)
    cases: list[TestCaseResult] = []
    for name, test in list(namespace.items()):
        if not (name.startswith("test_") and callable(test)):
            continue
        try:
            test()
        except AssertionError as exc:
            cases.append(TestCaseResult(name=name, outcome="failed", message=f"E AssertionError {exc}", suite=suite))
        except Exception as exc:
            cases.append(TestCaseResult(name=name, outcome="error", message=f"E {type(exc).__name__}", suite=suite))
        else:
            cases.append(TestCaseResult(name=name, outcome="passed", suite=suite))
    return cases


class InProcessProbes:
    """Evaluates calls of a candidate in this process: the value's ``repr``, or the exception's type name."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, list[str]]] = []

    async def run(self, code: str, calls: list[str]) -> list[ProbeResult]:
        self.runs.append((code, list(calls)))
        namespace: dict[str, Any] = {}
        try:
            exec(compile(code, SOLUTION_FILE, "exec"), namespace)
        except Exception as exc:
            return [ProbeResult(call, "raises", type(exc).__name__) for call in calls]
        results = []
        for call in calls:
            try:
                value = eval(call, namespace)
            except Exception as exc:
                results.append(ProbeResult(call, "raises", type(exc).__name__))
            else:
                results.append(ProbeResult(call, "value", repr(value)))
        return results


@dataclass
class MemoryWorktree:
    """A session worktree that keeps each path's committed versions in memory (``VersionWriter``)."""

    commits: list[tuple[str, str, str]] = field(default_factory=list)
    """(path, content, message) per commit, oldest first."""
    closed: bool = False

    def commit_version(self, relpath: str, content: str, message: str, trailers: dict[str, str] | None = None) -> str:
        self.commits.append((relpath, content, message))
        return hashlib.sha1(f"{len(self.commits)}:{relpath}:{content}".encode()).hexdigest()

    def diff_from_previous(self, relpath: str, content: str) -> str:
        before = next((c for p, c, _m in reversed(self.commits) if p == relpath), None)
        return "" if before == content else f"--- {relpath}\n+++ {relpath}\n"

    def close(self, remove_worktree: bool = True) -> None:
        self.closed = True
