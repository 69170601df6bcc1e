"""pytest plugin shipped *into* the sandbox as ``conftest.py`` (not imported by debatecode).

It records one JSON line per test in ``.dc_results.jsonl`` and enforces a
per-test time limit with ``SIGALRM``, so an infinite loop in one test is
reported as that test's ``timeout`` while the other tests still run.
Only the standard library and pytest are available here.
"""

import json
import os
import signal
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest

_RESULTS = ".dc_results.jsonl"
_LIMIT = float(os.environ.get("DC_TEST_TIMEOUT", "10"))
_MESSAGE_CAP = 2000


class TestTimeout(Exception):
    """Raised inside a test that ran past its time limit."""

    __test__ = False


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise TestTimeout(f"test exceeded its time limit of {_LIMIT:g}s")


def _write(record: dict[str, Any]) -> None:
    with open(_RESULTS, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, _LIMIT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if report.passed:
            outcome = "passed"
        elif report.when == "setup":
            outcome = "error"
        elif "TestTimeout" in report.longreprtext:
            outcome = "timeout"
        else:
            outcome = "failed"
        _write(
            {
                "name": report.location[2] if report.location else report.nodeid,
                "nodeid": report.nodeid,
                "outcome": outcome,
                "message": report.longreprtext[-_MESSAGE_CAP:] if not report.passed else "",
                "duration_s": round(report.duration, 6),
                "started": time.time(),
            }
        )


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _write(
            {
                "name": "<collection>",
                "nodeid": report.nodeid,
                "outcome": "error",
                "message": report.longreprtext[-_MESSAGE_CAP:],
                "duration_s": 0.0,
            }
        )
