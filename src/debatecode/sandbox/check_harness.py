"""The in-sandbox check harness: runs a file of tests against a file of code. Stdlib only.

The host never imports this module to run it: ``debatecode.sandbox.checks``
writes its source into the job as ``_dc_check.py`` next to ``solution.py``
(the code) and ``test_solution.py`` (the tests), and runs ``python3 _dc_check.py
solution.py test_solution.py .dc_results.jsonl TEST_TIMEOUT_S [ENTRY_POINT]``.
It is much lighter than pytest: one interpreter start, no plugins, and not
even ``json`` or ``signal`` imported (each costs milliseconds per job), which
matters when thousands of candidates are checked.

What it does:

1. Imports the code as module ``solution`` (so tests may ``from solution import f``),
   then runs the tests' source in a namespace that starts as a copy of the
   code's, so tests may also call the code's names directly, as HumanEval's do.
2. Collects the tests: every callable named ``test_*`` defined by the tests, and,
   when ``entry_point`` is set and the tests define ``check``, one test ``check``
   that calls ``check(<entry point>)`` (HumanEval's convention).
3. Runs each test under its own time limit (``SIGALRM``), and records one JSON
   line per event in ``.dc_results.jsonl``: ``collected`` (the names), ``start``
   before each test, then its outcome: ``passed``, ``failed`` (AssertionError),
   ``error`` (any other exception) or ``timeout``, with its duration. Each line
   is a Python literal (``repr`` of a dict), flushed as it is written, so a job
   killed mid-test still tells which test was running.
4. Exits 0 when every test passed (and there was at least one), else 1.

If the code or the tests fail to load, it records a ``load_error`` line and
exits 1.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

try:  # the C module: ``signal`` itself would import enum, several ms per job
    import _signal as signals
except ImportError:  # pragma: no cover - not CPython
    import signal as signals

MESSAGE_CAP = 2000
ModuleType = type(sys)


class TestTimeout(BaseException):
    """Raised in a test by SIGALRM. A BaseException, so ``except Exception`` in the code does not swallow it."""


class Recorder:
    """Writes one Python-literal line per event (the host reads them with ``ast.literal_eval``)."""

    def __init__(self, path: str) -> None:
        self.handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - kept open for the whole run

    def write(self, record: dict[str, object]) -> None:
        self.handle.write(repr(record) + "\n")
        self.handle.flush()


def short_traceback(exc: BaseException) -> str:
    import traceback  # only on failure: it costs an import per job

    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(lines)[-MESSAGE_CAP:]


def load(code_file: str, tests_file: str, entry: str) -> list[tuple[str, Callable[[], object]]]:
    """Import the code, run the tests' source, and return the tests."""
    module = ModuleType(os.path.splitext(code_file)[0])
    module.__file__ = os.path.abspath(code_file)
    sys.modules[module.__name__] = module
    with open(code_file, encoding="utf-8") as handle:
        exec(compile(handle.read(), code_file, "exec"), module.__dict__)
    namespace = dict(module.__dict__)
    namespace["__name__"] = os.path.splitext(tests_file)[0]
    namespace["__file__"] = os.path.abspath(tests_file)
    with open(tests_file, encoding="utf-8") as handle:
        exec(compile(handle.read(), tests_file, "exec"), namespace)
    tests: list[tuple[str, Callable[[], object]]] = []
    for name, value in list(namespace.items()):
        if name.startswith("test_") and callable(value) and value is not module.__dict__.get(name):
            tests.append((name, value))
    check = namespace.get("check")
    if entry and callable(check):
        if entry not in namespace:
            raise NameError(f"the code defines no {entry!r}")
        target = namespace[entry]
        tests.append(("check", lambda: check(target)))
    return tests


def run_test(test: Callable[[], object], limit_s: float) -> tuple[str, str]:
    def on_alarm(_signum: int, _frame: object) -> None:
        raise TestTimeout()

    signals.signal(signals.SIGALRM, on_alarm)
    signals.setitimer(signals.ITIMER_REAL, limit_s)
    try:
        test()
        return "passed", ""
    except TestTimeout:
        return "timeout", f"the test ran longer than its limit of {limit_s:g}s"
    except AssertionError as exc:
        return "failed", short_traceback(exc)
    except BaseException as exc:
        return "error", short_traceback(exc)
    finally:
        signals.setitimer(signals.ITIMER_REAL, 0)


def main(argv: list[str]) -> int:
    """``_dc_check.py CODE_FILE TESTS_FILE RESULTS_FILE TEST_TIMEOUT_S [ENTRY_POINT]``."""
    code_file, tests_file, results_file, limit = argv[:4]
    entry = argv[4] if len(argv) > 4 else ""
    recorder = Recorder(results_file)
    sys.path.insert(0, os.getcwd())
    try:
        tests = load(code_file, tests_file, entry)
    except BaseException as exc:
        recorder.write({"event": "load_error", "message": short_traceback(exc)})
        return 1
    recorder.write({"event": "collected", "tests": [name for name, _ in tests]})
    all_passed = bool(tests)
    for name, test in tests:
        recorder.write({"event": "start", "name": name})
        started = time.perf_counter()
        outcome, message = run_test(test, float(limit))
        duration = time.perf_counter() - started
        recorder.write({"name": name, "outcome": outcome, "duration_s": round(duration, 6), "message": message})
        all_passed = all_passed and outcome == "passed"
    return 0 if all_passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
