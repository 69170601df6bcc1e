"""The in-sandbox test checker: it owns the tests and the verdict; the code under test runs apart. Stdlib only.

The host joins the checker's parts into one file (``debatecode.sandbox.wire.checker_source``:
``codec.py``, the wire format of both processes; ``candidate.py``, the candidate side;
``remote.py``, ``session.py`` and ``modes.py``, the checker side; then this file, its entry
point), writes it into the job as ``_dc_check.py`` and runs
``python3 -I -B _dc_check.py PLAN_FILE``. Two processes take part:

- the **checker** (this process) reads the plan, the nonce and every test file
  into memory, deletes them from the work dir, runs the tests, compares
  results, and writes verdict lines to a private copy of its stdout;
- the **candidate** (a child forked before any test is read, or a fresh
  interpreter after a crash) imports ``solution.py`` and serves calls over a
  pair of pipes. It holds no file descriptor of the verdict channel.

What crosses from the candidate is plain data only: None, bool, int, float,
str, bytes, complex and lists, tuples, dicts, sets and frozensets of them,
decoded here from JSON into exact built-in types. Subclasses of built-ins are
refused (a few ``collections`` types and named tuples are converted to their
base type by value). Any other object stays in the candidate and is reached
through a ``Remote`` handle; a handle never compares equal to plain data here.
So ``==``, ``assert`` and the verdict itself always run in this process, on
values the candidate cannot dress up.

The checker is non-dumpable, so the candidate (same uid, no capabilities)
cannot read its memory, ptrace it, or open ``/proc/<checker>/fd/*``. Killing or
stopping the checker only loses the verdict, which the host scores as failure.

Verdict lines: ``@@DC_VERDICT@@ <nonce> <json>`` with events ``collected``,
``result``, ``probe`` and finally ``done``. Plan modes: ``light`` (``test_*``
functions and HumanEval's ``check``), ``pytest`` (pytest modules, run by
pytest inside this process) and ``probe`` (evaluate call expressions).
"""

from __future__ import annotations

import os
import sys

# Annotations only: ``typing`` is never imported when the checker runs (mypy treats this name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # when composed, the parts joined before this one define these names
    from debatecode.sandbox._guest.candidate import add_image_paths, candidate_main
    from debatecode.sandbox._guest.codec import SOLUTION_MODULE, json_loads
    from debatecode.sandbox._guest.modes import run_light, run_probes, run_pytest
    from debatecode.sandbox._guest.remote import Checker, fork_early
    from debatecode.sandbox._guest.session import (
        Session,
        Verdict,
        checker_imports,
        read_and_hide,
        short_traceback,
        solution_names,
    )

PR_SET_DUMPABLE = 4
COMPILED_FILE = ".dc_check.code"


def harden() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def main(argv: list[str]) -> int:
    """``_dc_check.py PLAN_FILE``: the plan names the mode, the test files and the limits."""
    workdir = os.getcwd()
    add_image_paths(workdir)
    harden()
    with open(os.path.abspath(__file__), encoding="utf-8") as handle:
        source = handle.read()
    try:
        os.unlink(COMPILED_FILE)  # read by the loader already (see debatecode.sandbox.verdict.LOADER)
    except OSError:
        pass
    with open(os.path.join(workdir, SOLUTION_MODULE + ".py"), encoding="utf-8", errors="replace") as handle:
        names, imports = solution_names(handle.read())
    imported = checker_imports(imports)  # before the fork, so the candidate inherits them instead of importing again
    first_child = fork_early(workdir)
    # From here on the candidate exists but waits for "load"; nothing secret was in memory when it forked.
    verdict_fd = os.dup(1)
    os.dup2(2, 1)  # anything printed here (pytest's report, test prints) goes to stderr, never to the verdict
    plan = json_loads(read_and_hide(argv[0]))
    nonce = read_and_hide(plan["nonce_file"]).strip()
    verdict = Verdict(verdict_fd, nonce)
    checker = Checker(workdir, source, first_child)
    session = Session(plan, verdict, checker, names, imported)
    mode = plan.get("mode")
    try:
        task_error = None
        if plan.get("task_file"):
            try:
                session.define_task_names(read_and_hide(plan["task_file"]))
            except BaseException as exc:
                task_error = short_traceback(exc)
        if task_error is not None:
            verdict.write({"event": "load_error", "message": "the task's own definitions failed to run here "
                           f"(a problem of the task, not of the code under test): {task_error}"})  # fmt: skip
        elif mode == "pytest":
            run_pytest(session, list(plan.get("files") or []))
        elif mode == "probe":
            calls = json_loads(read_and_hide(plan["calls_file"]))
            run_probes(session, [str(call) for call in calls])
        else:
            sources = [(name, read_and_hide(name)) for name in plan.get("files") or []]
            run_light(session, sources)
    except BaseException as exc:
        verdict.write({"event": "checker_error", "message": short_traceback(exc)})
    finally:
        checker.kill()
    verdict.write({"event": "done"})
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--candidate"]:
        candidate_main(3, 4, sys.argv[2])
    sys.exit(main(sys.argv[1:]))
