"""debatecode's grader plugin for pytest, installed in the SWE-bench base image as ``debatecode_swebench_grader``.

Loaded with ``-p`` by the driver, so pytest imports it before any conftest or
test module. Standard library and pytest only; debatecode never imports it.

- It reads its configuration file (named by ``DEBATECODE_GRADER_CONFIG``) and
  deletes it at once: the junit XML and ledger paths never appear on the command
  line or in a file the tests can read later.
- It appends the repository's directories to ``sys.path`` (after the standard
  library and site-packages, so repository files cannot shadow them).
- It points pytest's own junit XML writer at that path.
- It keeps a **ledger** of its own: for each test, whether its setup, call and
  teardown raised, seen by hook wrappers around the test functions themselves,
  before any report is made. A plugin that rewrites reports (a forced
  ``pytest_runtest_makereport``, a patched ``TestReport``) changes the log and the
  junit XML but not the ledger.
- It takes a **snapshot** of pytest's and pluggy's machinery (the functions and
  classes of the runner, reports, python, skipping, main, junitxml and terminal
  modules, the hook executor, ``builtins.__import__``, ``sys.meta_path``) when it
  is imported, before any repository code runs; at the end of the session it
  compares, and lists in the ledger every change and every plugin registered from
  a repository file other than a ``conftest.py`` (which the host restores).
- When pytest has finished (``pytest_unconfigure``, last), it writes the ledger,
  flushes the output and ends the process with pytest's session exit status, so
  ``atexit`` handlers and other late code of the code under test cannot rewrite
  the results or the exit status afterwards.

Code under test runs in the same process as pytest and could, in principle, reach
into this plugin too; the grading therefore also needs the log, the junit XML, the
ledger and the exit status to agree. See docs/benchmarks-swebench.md.
"""

from __future__ import annotations

import builtins
import importlib
import json
import os
import sys
from typing import Any

import pytest

CONFIG_ENV = "DEBATECODE_GRADER_CONFIG"
_WATCHED_MODULES = (
    "pytest",
    "_pytest.runner",
    "_pytest.reports",
    "_pytest.python",
    "_pytest.skipping",
    "_pytest.main",
    "_pytest.junitxml",
    "_pytest.terminal",
    "_pytest.outcomes",
    "_pytest.nodes",
    "_pytest.unittest",
    "pluggy._callers",
    "pluggy._hooks",
    "pluggy._manager",
    "pluggy._result",
)


def _load() -> dict[str, Any]:
    path = os.environ.pop(CONFIG_ENV, "")
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            config: dict[str, Any] = json.load(handle)
    except (OSError, ValueError):
        return {}
    try:
        os.unlink(path)
    except OSError:
        return {}
    return config


def _watchable(value: object) -> bool:
    return callable(value) or isinstance(value, (property, classmethod, staticmethod, type))


def _snapshot() -> dict[str, object]:
    """``module.attr`` and ``module.Class.attr`` -> the function or class there now."""
    taken: dict[str, object] = {}
    for name in _WATCHED_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr, value in list(vars(module).items()):
            if not _watchable(value):
                continue
            taken[f"{name}.{attr}"] = value
            if isinstance(value, type) and value.__module__ == name:
                for member, inner in list(vars(value).items()):
                    if _watchable(inner):
                        taken[f"{name}.{attr}.{member}"] = inner
    taken["builtins.__import__"] = builtins.__import__
    taken["os._exit"] = os._exit
    return taken


_MISSING = object()
_config = _load()
for _entry in _config.get("pythonpath", []):
    if _entry not in sys.path:
        sys.path.append(_entry)
_state: dict[str, Any] = {
    "junit": _config.get("junit"),
    "ledger": _config.get("ledger"),
    "repo": os.path.realpath(_config.get("repo") or os.getcwd()),
}
del _config
_BASELINE = _snapshot()
_META_PATH = list(sys.meta_path)
_TESTS: dict[str, dict[str, str]] = {}
_TAMPERED: list[str] = []


def _outcome(excinfo: Any) -> str:
    if excinfo is None:
        return "ok"
    from _pytest.outcomes import Skipped, XFailed

    kind = excinfo[0]
    if isinstance(kind, type) and issubclass(kind, Skipped):
        return "skipped"
    if isinstance(kind, type) and issubclass(kind, XFailed):
        return "xfailed"
    return "raised"


def _record(item: pytest.Item, phase: str, outcome: Any) -> None:
    _TESTS.setdefault(item.nodeid, {})[phase] = _outcome(outcome.excinfo)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    outcome = yield
    _record(item, "setup", outcome)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    outcome = yield
    _record(item, "call", outcome)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Any:
    outcome = yield
    _record(item, "teardown", outcome)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if _state["junit"]:
        config.option.xmlpath = _state.pop("junit")
    _state["hookexec"] = getattr(config.pluginmanager, "_inner_hookexec", None)


def _source_file(plugin: object) -> str | None:
    """The file that defines a plugin or finder: a module's own, else its class's module's."""
    path = getattr(plugin, "__file__", None)
    if path is None:
        owner = plugin if isinstance(plugin, type) else type(plugin)
        module = sys.modules.get(getattr(owner, "__module__", "") or "")
        path = getattr(module, "__file__", None)
    return os.path.realpath(path) if isinstance(path, str) else None


def _check(config: pytest.Config) -> None:
    """Record every change to the watched machinery, and plugins registered from repository files."""
    now = _snapshot()
    changed = sorted(key for key, value in _BASELINE.items() if now.get(key, _MISSING) is not value)
    if changed:
        _TAMPERED.append("pytest's machinery was changed: " + ", ".join(changed[:10]))
    if getattr(config.pluginmanager, "_inner_hookexec", None) is not _state.get("hookexec"):
        _TAMPERED.append("pluggy's hook executor was replaced")
    added = [finder for finder in sys.meta_path if not any(finder is known for known in _META_PATH)]
    for finder in added:
        where = _source_file(finder)
        if where is None or where.startswith(_state["repo"] + os.sep):
            _TAMPERED.append(f"an import hook was added by repository code: {type(finder).__name__}")
    for plugin in config.pluginmanager.get_plugins():
        where = _source_file(plugin)
        if where and where.startswith(_state["repo"] + os.sep) and os.path.basename(where) != "conftest.py":
            _TAMPERED.append(f"a pytest plugin was registered from a repository file: {where}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _state["exitstatus"] = int(exitstatus)
    _check(session.config)


def _write_ledger() -> None:
    path = _state.get("ledger")
    if not path:
        return
    data = json.dumps({"tests": _TESTS, "tampered": _TAMPERED, "exitstatus": _state.get("exitstatus")})
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(descriptor, data.encode("utf-8"))
    finally:
        os.close(descriptor)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if "exitstatus" not in _state:
        return
    _write_ledger()
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    writer = getattr(reporter, "_tw", None)
    if writer is not None:
        writer.flush()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError):
                continue
    os._exit(_state["exitstatus"])
