"""The checker's three plan modes: ``light`` tests, ``probe`` calls and ``pytest`` modules. Stdlib only.

The fifth part of the checker (joined after ``session.py``; see ``checker.py``). Each mode runs
in the checker's process, calls the code under test through ``Remote`` handles, and writes one
verdict record per test or call through the ``Session``.
"""

from __future__ import annotations

import builtins
import os
import sys
import time

# Annotations only: ``typing`` is never imported when the checker runs (mypy treats this name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # when composed, the parts joined before this one define these names
    from collections.abc import Callable, Generator
    from typing import Any, NoReturn

    import pytest

    from debatecode.sandbox._guest.codec import MESSAGE_CAP, SOLUTION_MODULE, TestTimeout
    from debatecode.sandbox._guest.remote import Remote
    from debatecode.sandbox._guest.session import (
        SOURCES,
        Alarm,
        Session,
        TimeLimits,
        read_and_hide,
        run_with_limit,
        short_traceback,
    )


def run_light(session: Session, sources: list[tuple[str, str]]) -> None:
    """``test_*`` functions and HumanEval's ``check(entry_point)``, run in this process."""
    plan = session.plan
    namespace = dict(session.proxy_module.__dict__)
    namespace.pop("__getattr__", None)
    namespace["__name__"] = "test_solution"
    namespace["__builtins__"] = builtins
    session.namespaces.append(namespace)
    session.light_namespace = namespace
    tests: list[tuple[str, Callable[[], object]]] = []
    try:
        for filename, text in sources:
            SOURCES[filename] = text
            exec(compile(text, filename, "exec"), namespace)
        for name, value in list(namespace.items()):
            if name.startswith("test_") and callable(value) and not isinstance(value, Remote):
                tests.append((name, value))
        entry: Any = plan.get("entry_point")
        check = namespace.get("check")
        if entry and callable(check) and not isinstance(check, Remote):
            tests.append(("check", lambda: check(namespace[entry])))
    except BaseException as exc:
        session.verdict.write({"event": "load_error", "message": short_traceback(exc)})
        return
    load_error = session.load_candidate()
    if load_error is not None:
        session.verdict.write({"event": "load_error", "message": f"the code under test failed to load: {load_error}"})
        return
    session.verdict.write({"event": "collected", "tests": [name for name, _ in tests]})
    entry = plan.get("entry_point")
    if entry and entry not in session.checker.names:
        namespace[entry] = _missing(entry)
    limits = session.limits
    for name, test in tests:
        limit = limits.next_limit()
        if not limit:
            session.record(name, "timeout", 0.0, limits.not_run_message())
            continue
        started = time.perf_counter()
        outcome, message = run_with_limit(test, limit)
        duration = time.perf_counter() - started
        if outcome == "timeout":
            message = limits.timeout_message(limit)
        limits.spent(name, outcome, duration)
        session.record(name, outcome, duration, message)


def _missing(entry: str) -> Callable[..., NoReturn]:
    def missing(*_args: object, **_kwargs: object) -> NoReturn:
        raise NameError(f"the code defines no {entry!r}")

    return missing


def run_probes(session: Session, calls: list[str]) -> None:
    """Evaluate each call expression with the solution's names; report the value's repr as seen here."""
    load_error = session.load_candidate()
    namespace = dict(session.proxy_module.__dict__)
    namespace.pop("__getattr__", None)
    namespace["__builtins__"] = builtins
    limits = TimeLimits(float(session.plan.get("test_timeout_s") or 2))
    for call in calls:
        record: dict[str, Any] = {"event": "probe", "call": call}
        if load_error is not None:
            # The end of the traceback names the error.
            record.update(outcome="raises", expected="ImportError", message=load_error[-500:])
            session.verdict.write(record)
            continue
        limit = limits.next_limit()
        if not limit:
            record.update(outcome="timeout", expected="", message=limits.not_run_message())
            session.verdict.write(record)
            continue
        box: dict[str, Any] = {}

        def evaluate(call: str = call, box: dict[str, Any] = box) -> None:
            box["value"] = eval(call, dict(namespace))

        started = time.perf_counter()
        with Alarm(limit):
            try:
                evaluate()
                value = box["value"]
                shown = value._dc_candidate_repr() if isinstance(value, Remote) else repr(value)
                record.update(outcome="value", expected=shown[:MESSAGE_CAP])
            except TestTimeout:
                record.update(outcome="timeout", expected="", message=f"call exceeded {limit:g}s")
            except BaseException as exc:
                record.update(outcome="raises", expected=type(exc).__name__, message=str(exc)[:500])
        # A value or an exception is an answer; only a timeout draws on the shared allowance.
        limits.spent(call, "timeout" if record["outcome"] == "timeout" else "passed", time.perf_counter() - started)
        session.verdict.write(record)


def run_pytest(run: Session, files: list[str]) -> None:
    """pytest modules, collected and run by pytest in this process (no conftest, no plugins from the work dir)."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ.pop("PYTEST_ADDOPTS", None)
    os.environ.pop("PYTEST_PLUGINS", None)
    import pytest

    limits = run.limits
    workdir = run.checker.workdir

    class VerdictPlugin:
        @pytest.hookimpl(tryfirst=True)
        def pytest_collection_finish(self, session: pytest.Session) -> None:
            import linecache

            for path in files:
                full = os.path.join(workdir, path)
                try:
                    text = read_and_hide(full)
                except OSError:
                    continue
                linecache.cache[full] = (len(text), None, text.splitlines(True), full)
            sys.path[:] = [entry for entry in sys.path if entry and not os.path.abspath(entry).startswith(workdir)]
            sys.path_importer_cache.clear()
            for module in list(sys.modules.values()):
                module_file = getattr(module, "__file__", None) or ""
                if module_file.startswith(workdir) and module is not run.proxy_module:
                    run.namespaces.append(module.__dict__)
            run.verdict.write(
                {"event": "collected", "tests": [item.location[2] for item in session.items],
                 "files": [item.nodeid.split("::")[0] for item in session.items]}
            )  # fmt: skip
            load_error = run.load_candidate()
            if load_error is not None:
                run.verdict.write(
                    {"event": "load_error", "message": f"the code under test failed to load: {load_error}"}
                )

        alarm = Alarm(0.0)
        """The alarm of the test running now (its limit 0.0: the test was not run; ``rang``: it went off)."""

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, None]:
            self.alarm = Alarm(limits.next_limit())
            if not self.alarm.limit_s:
                raise TestTimeout()  # before the yield: pytest reports the test failed without running it
            with self.alarm:
                yield

        def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
            if report.when == "call" or (report.when == "setup" and not report.passed):
                message = "" if report.passed else (report.longreprtext or "skipped")[-MESSAGE_CAP:]
                if report.passed:
                    outcome = "passed"
                elif report.when == "setup" or report.skipped:
                    outcome = "error"
                elif not self.alarm.limit_s:
                    outcome, message = "timeout", limits.not_run_message()
                elif self.alarm.rang:
                    outcome, message = "timeout", limits.timeout_message(self.alarm.limit_s)
                elif "TestTimeout" in report.longreprtext:
                    outcome = "timeout"
                elif "AssertionError" in report.longreprtext or report.longreprtext.lstrip().startswith("E"):
                    outcome = "failed" if _is_assertion(report) else "error"
                else:
                    outcome = "error"
                name = report.location[2] if report.location else report.nodeid
                if report.when == "call":
                    limits.spent(name, outcome, report.duration)
                run.record(name, outcome, report.duration, message, report.nodeid.split("::")[0])

        def pytest_collectreport(self, report: pytest.CollectReport) -> None:
            if report.failed:
                run.verdict.write(
                    {"event": "result", "name": "<collection>", "file": report.nodeid, "outcome": "error",
                     "duration_s": 0.0, "message": report.longreprtext[-MESSAGE_CAP:]}
                )  # fmt: skip

    sys.modules[SOLUTION_MODULE] = run.proxy_module
    args = [
        *files,
        "-q",
        "-p", "no:cacheprovider",
        "--noconftest",
        "--import-mode=importlib",
        "-c", os.devnull,
        "--rootdir", workdir,
        "--tb=short",
        "-o", "console_output_style=classic",
    ]  # fmt: skip
    pytest.main(args, plugins=[VerdictPlugin()])


def _is_assertion(report: pytest.TestReport) -> bool:
    excinfo = getattr(report, "longrepr", None)
    crash = getattr(getattr(excinfo, "reprcrash", None), "message", "") or ""
    return crash.startswith("AssertionError") or crash.startswith("assert ")
