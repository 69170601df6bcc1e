"""Run the challenges: end-to-end user journeys through the real CLI, Docker, SQLite, PostgreSQL and git.

    .venv/bin/python -m challenges.run            # all of them
    .venv/bin/python -m challenges.run git_hook   # some of them, by name

Each challenge is a module here with ``run(journey) -> str`` and the services it
needs as flags: ``NEEDS_DOCKER = True``, ``NEEDS_POSTGRES = True`` (the server
``DEBATECODE_TEST_POSTGRES_URL`` names; ``bash .ci/run`` starts one). Adding a
challenge is a module and a line in ``CHALLENGES``. A challenge whose service is
missing fails, saying what to start.
Exit status: 0 when every challenge held, 1 otherwise.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import ModuleType

from rich.console import Console
from rich.table import Table

from challenges._harness import POSTGRES_URL_ENV, ChallengeFailed, Journey

CHALLENGES = (
    "solve_and_audit",
    "sandbox_attacks",
    "git_hook",
    "humaneval_predictions",
    "swebench_grading",
    "postgres_solve",
    "provider_fault_recovery",
    "resume_after_kill",
    "server_gate_sse",
    "design_debate",
    "reflexion_sweep",
    "ray_benchmark",
)


def docker_problem() -> str | None:
    """None when a Docker engine answers, else what to do about it."""
    try:
        import docker

        docker.from_env(timeout=5).ping()
    except Exception:
        return "needs a Docker engine and none answers: start dockerd"
    return None


def postgres_problem() -> str | None:
    """None when the PostgreSQL server of ``DEBATECODE_TEST_POSTGRES_URL`` answers, else what to do about it."""
    url = os.environ.get(POSTGRES_URL_ENV, "")
    if not url:
        return f"needs PostgreSQL: set {POSTGRES_URL_ENV} (see .ci/run)"
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # any driver or server error means: not usable here
        shown = make_url(url).render_as_string(hide_password=True)
        return f"needs PostgreSQL: {POSTGRES_URL_ENV} names {shown}, which does not answer ({type(exc).__name__})"
    finally:
        engine.dispose()
    return None


NEEDS = {"NEEDS_DOCKER": docker_problem, "NEEDS_POSTGRES": postgres_problem}
"""The services a challenge module may declare it needs (``NEEDS_DOCKER = True``), each with its check."""


def unmet_need(module: ModuleType, known: dict[str, str | None]) -> str | None:
    """Why ``module`` cannot run here (a service it needs is missing), or None; ``known`` caches the checks."""
    for flag, check in NEEDS.items():
        if getattr(module, flag, False):
            if flag not in known:
                known[flag] = check()
            if known[flag]:
                return known[flag]
    return None


def main(argv: list[str]) -> int:
    console = Console()
    names = argv or list(CHALLENGES)
    unknown = [n for n in names if n not in CHALLENGES]
    if unknown:
        console.print(f"[red]unknown challenge(s): {', '.join(unknown)}; known: {', '.join(CHALLENGES)}")
        return 2
    problems: dict[str, str | None] = {}
    table = Table(title="debatecode challenges")
    for column in ("challenge", "result", "time", "detail"):
        table.add_column(column)
    failures: list[tuple[str, str]] = []
    for name in names:
        module = importlib.import_module(f"challenges.{name}")
        missing = unmet_need(module, problems)
        if missing:
            table.add_row(name, "[red]FAILED", "-", missing)
            failures.append((name, missing))
            continue
        workdir = Path(tempfile.mkdtemp(prefix=f"challenge-{name}-"))
        journey = Journey(workdir)
        started = time.monotonic()
        with console.status(f"{name}…"):
            try:
                detail, result = module.run(journey), "[green]passed"
            except ChallengeFailed as exc:
                detail, result = str(exc), "[red]FAILED"
            except Exception:
                detail, result = traceback.format_exc(limit=3), "[red]CRASHED"
        if result != "[green]passed":
            commands = "\n".join(journey.log)
            failures.append((name, f"{detail}\ncommands:\n{commands}\nscratch folder kept: {workdir}"))
            lines = detail.strip().splitlines() or ["(no message)"]
            detail = (lines[0] if result == "[red]FAILED" else lines[-1]) + " (details below)"
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        table.add_row(name, result, f"{time.monotonic() - started:.1f}s", detail)
    console.print(table)
    for name, detail in failures:
        console.rule(f"[red]{name}")
        console.print(detail, markup=False, highlight=False, soft_wrap=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
