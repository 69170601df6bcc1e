"""The checker's session: the verdict channel, the time limits, and the solution's names. Stdlib only.

The fourth part of the checker (joined after ``remote.py``; see ``checker.py``). A ``Session``
holds what every plan mode shares: the ``Verdict`` writer (lines only this process can write),
the per-test ``TimeLimits``, the proxy module of the solution's names, and the task's own
definitions run in the checker.
"""

from __future__ import annotations

import builtins
import os
import sys

# Annotations only: ``typing`` is never imported when the checker runs (mypy treats this name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # when composed, the parts joined before this one define these names
    from collections.abc import Callable
    from typing import Any, NoReturn

    from debatecode.sandbox._guest.candidate import signals
    from debatecode.sandbox._guest.codec import MESSAGE_CAP, SOLUTION_MODULE, Import, TestTimeout, json_dumps
    from debatecode.sandbox._guest.remote import Checker, Remote, accept_calls

MARK = "@@DC_VERDICT@@"
TASK_FILE = "_dc_task.py"
"""The task's own definitions, when the plan names them (``task_file``)."""


class Verdict:
    def __init__(self, fd: int, nonce: str) -> None:
        self.fd, self.nonce = fd, nonce

    def write(self, record: dict[str, Any]) -> None:
        line = f"\n{MARK} {self.nonce} {json_dumps(record)}\n"
        data = line.encode("utf-8", "replace")
        while data:
            data = data[os.write(self.fd, data) :]


SOURCES: dict[str, str] = {}
"""Test file name -> text: the files are gone from disk, tracebacks read them from here."""


def short_traceback(exc: BaseException) -> str:
    import linecache
    import traceback

    for filename, text in SOURCES.items():
        linecache.cache.setdefault(filename, (len(text), None, text.splitlines(True), filename))

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    remote = getattr(exc, "candidate_traceback", "")
    if remote:
        text += "\nIn the code under test:\n" + remote
    return text[-MESSAGE_CAP:]


class Alarm:
    """``TestTimeout`` raised in the checker ``limit_s`` seconds into a with-block, unless the block ends first.

    Every test and probe call runs under one. ``rang`` says whether this alarm went off (a ``TestTimeout``
    also comes from a test that is not run). On leaving, the timer stops and the SIGALRM handler found on
    entering is put back.
    """

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.rang = False
        self._previous: Any = None

    def _ring(self, _signum: int, _frame: object) -> NoReturn:
        self.rang = True
        raise TestTimeout()

    def __enter__(self) -> Alarm:
        self._previous = signals.signal(signals.SIGALRM, self._ring)
        signals.setitimer(signals.ITIMER_REAL, self.limit_s)
        return self

    def __exit__(self, *_exc: object) -> None:
        signals.setitimer(signals.ITIMER_REAL, 0)
        signals.signal(signals.SIGALRM, self._previous)


def run_with_limit(function: Callable[[], object], limit_s: float) -> tuple[str, str]:
    with Alarm(limit_s):
        try:
            function()
            return "passed", ""
        except TestTimeout:
            return "timeout", f"the test ran longer than its limit of {limit_s:g}s"
        except AssertionError as exc:
            return "failed", short_traceback(exc)
        except BaseException as exc:
            return "error", short_traceback(exc)


SHORT_LIMIT_S = 1.0
"""A test's limit once an earlier test of the same candidate has timed out (the full limit if that is shorter)."""
MIN_LIMIT_S = 0.05
"""Below this much time left, a test is reported without running (``setitimer(0)`` would mean no limit)."""


class TimeLimits:
    """The time limits of one candidate's tests: full until a test times out, then short and shared.

    A candidate that loops forever in its entry point would otherwise spend the
    full per-test limit on every test. So once a test times out, every later
    test of the candidate runs under ``min(full, SHORT_LIMIT_S)``, and the later
    tests that do not pass draw their time from one more full limit, shared:
    however many tests there are, timeouts cost a candidate at most twice the
    per-test limit. When that allowance is spent, the remaining tests are
    reported as ``timeout`` without running, and their message says why.
    Tests that pass cost nothing from it, so code that loops on one input
    still passes its other tests, unless one of them legitimately needs more
    than ``SHORT_LIMIT_S``.

    The clock lives in the checker; the code under test can only make it
    stricter (by timing out), never longer or a test passed.
    """

    def __init__(self, full_s: float) -> None:
        self.full_s = full_s
        self.short_s = min(full_s, SHORT_LIMIT_S)
        self.left_s = full_s
        self.first_timeout = ""
        """The name of the first test that timed out ("" while none has)."""

    def next_limit(self) -> float:
        """The next test's limit in seconds; 0.0 when it must not run (see ``not_run_message``)."""
        if not self.first_timeout:
            return self.full_s
        limit = min(self.short_s, self.left_s)
        return limit if limit >= MIN_LIMIT_S else 0.0

    def spent(self, name: str, outcome: str, seconds: float) -> None:
        """Account for a finished test."""
        if not self.first_timeout:
            if outcome == "timeout":
                self.first_timeout = name
        elif outcome != "passed":
            self.left_s -= seconds

    def timeout_message(self, limit_s: float) -> str:
        message = f"the test ran longer than its limit of {round(limit_s, 2):g}s"
        if self.first_timeout and limit_s < self.full_s:
            message += f" (cut from {self.full_s:g}s because {self.first_timeout} timed out earlier)"
        return message

    def not_run_message(self) -> str:
        return (
            f"not run: {self.first_timeout} timed out, and the later tests that did not pass "
            f"used up their shared {self.full_s:g}s"
        )


def solution_names(source: str) -> tuple[list[str], list[Import]]:
    """Top-level names of the solution, read from its syntax tree (it is never run here).

    Names bound inside top-level ``if``/``try``/``with``/``for``/``while`` blocks count too (a fallback
    ``def`` under ``except ImportError:``); an ``if __name__ == "__main__":`` block does not, since the
    solution is imported as ``solution``.

    ``_ast`` and ``compile(..., PyCF_ONLY_AST)`` rather than ``ast``, whose import costs milliseconds per job.
    """
    import _ast

    try:
        tree: Any = compile(source, "solution.py", "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], []
    names: list[str] = []
    imports: list[Import] = []
    blocks = (
        _ast.If,
        _ast.Try,
        getattr(_ast, "TryStar", _ast.Try),
        _ast.With,
        _ast.AsyncWith,
        _ast.For,
        _ast.AsyncFor,
        _ast.While,
    )
    statements = tree.body[::-1]  # a stack: statements pop in source order
    while statements:
        node = statements.pop()
        if isinstance(node, blocks):
            inner = [] if _is_main_guard(node) else list(node.body)
            for handler in getattr(node, "handlers", []):
                inner += handler.body
            inner += [*getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            statements += inner[::-1]
        elif isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (_ast.Assign, _ast.AnnAssign, _ast.AugAssign)):
            targets = node.targets if isinstance(node, _ast.Assign) else [node.target]
            pending = list(targets)
            while pending:
                target = pending.pop()
                if isinstance(target, _ast.Name):
                    names.append(target.id)
                elif isinstance(target, (_ast.Tuple, _ast.List)):
                    pending.extend(target.elts)
                elif isinstance(target, _ast.Starred):
                    pending.append(target.value)
        elif isinstance(node, _ast.Import):
            for alias in node.names:
                imports.append((alias.name, None, alias.asname or alias.name.partition(".")[0]))
        elif isinstance(node, _ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    imports.append((node.module, alias.name, alias.asname or alias.name))
    return names, imports


def _is_main_guard(node: Any) -> bool:
    """``if __name__ == "__main__":``."""
    import _ast

    test = node.test if isinstance(node, _ast.If) else None
    return (
        isinstance(test, _ast.Compare)
        and isinstance(test.left, _ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], _ast.Eq)
        and isinstance(test.comparators[0], _ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def checker_imports(imports: list[Import]) -> dict[str, Any]:
    """The solution's imports of standard-library modules, done here for the tests' namespace."""
    bound: dict[str, Any] = {}
    for module_name, attribute, bind_as in imports:
        if module_name.partition(".")[0] not in sys.stdlib_module_names:
            continue
        try:
            __import__(module_name)
            module = sys.modules[module_name]
            if attribute is None:
                bound[bind_as] = (
                    sys.modules[module_name.partition(".")[0]] if bind_as == module_name.partition(".")[0] else module
                )
            elif hasattr(module, attribute):
                bound[bind_as] = getattr(module, attribute)
        except Exception:
            continue
    return bound


class Session:
    """One checker run: the plan, the candidate, the namespaces to fix up after loading, and the verdict."""

    def __init__(
        self, plan: dict[str, Any], verdict: Verdict, checker: Checker, names: list[str], imported: dict[str, Any]
    ) -> None:
        self.plan = plan
        self.verdict = verdict
        self.checker = checker
        self.proxy_module = type(sys)(SOLUTION_MODULE)
        self.proxy_module.__file__ = os.path.join(checker.workdir, SOLUTION_MODULE + ".py")
        namespace = self.proxy_module.__dict__
        namespace.update(imported)
        for name in names:
            namespace[name] = Remote(checker, {"n": name})
        namespace["__getattr__"] = self.module_getattr
        self.namespaces = [namespace]
        self.light_namespace: dict[str, object] | None = None
        self.limits = TimeLimits(float(plan.get("test_timeout_s") or 10))
        self.task_names: set[str] = set()
        """Names the task defined (``define_task_names``): the candidate's names never replace them."""
        sys.modules[SOLUTION_MODULE] = self.proxy_module

    def define_task_names(self, task_code: str) -> None:
        """Run the task's own definitions (a HumanEval prompt's helpers and imports) here, over the solution's names.

        A test that uses ``poly`` or ``math`` from the task gets the task's, never a redefinition in the
        code under test; the code under test still sees its own in its own process.
        """
        namespace = self.proxy_module.__dict__
        namespace["__builtins__"] = builtins
        exec(compile(task_code, TASK_FILE, "exec"), namespace)
        self.task_names = {name for name, value in namespace.items() if not isinstance(value, Remote)}

    def module_getattr(self, name: str) -> Remote:
        if name.startswith("__"):
            raise AttributeError(name)
        return Remote(self.checker, {"n": name})

    def load_candidate(self) -> str | None:
        """Import the solution in the candidate and put its data values in place of name proxies."""
        accept_calls()
        limit = float(self.plan.get("load_timeout_s") or self.plan.get("test_timeout_s") or 10)

        def load() -> None:
            self.checker.ensure_loaded()

        outcome, message = run_with_limit(load, limit)
        if outcome != "passed":
            if outcome == "timeout":  # run_with_limit's message speaks of a test
                message = f"importing the solution ran longer than its limit of {limit:g}s"
            self.checker.load_error = self.checker.load_error or message
            return message
        for name in list(self.checker.names):
            if name in self.task_names:
                continue
            if name not in self.proxy_module.__dict__:
                self.proxy_module.__dict__[name] = Remote(self.checker, {"n": name})
            if self.light_namespace is not None:  # names made at run time (globals()[...] = ...), as exec would see
                self.light_namespace.setdefault(name, Remote(self.checker, {"n": name}))
        for namespace in self.namespaces:
            for key, value in list(namespace.items()):
                if isinstance(value, Remote) and isinstance(value._dc_target, dict) and "n" in value._dc_target:
                    found = self.checker.resolved(value._dc_target["n"])
                    if found is not None:
                        namespace[key] = found[1]
        return None

    def record(self, name: str, outcome: str, duration: float, message: str, file: str = "") -> None:
        self.verdict.write(
            {"event": "result", "name": name, "file": file, "outcome": outcome,
             "duration_s": round(duration, 6), "message": message[-MESSAGE_CAP:]}
        )  # fmt: skip


def read_and_hide(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    os.unlink(path)
    return text
