"""Run the challenges: end-to-end user journeys through the real CLI, Docker, SQLite and git.

    .venv/bin/python -m challenges.run            # all of them
    .venv/bin/python -m challenges.run git_hook   # some of them, by name

Each challenge is a module here with ``run(journey) -> str`` and ``NEEDS_DOCKER``.
Exit status: 0 when every challenge held, 1 otherwise.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from rich.console import Console
from rich.table import Table

from challenges._harness import ChallengeFailed, Journey

CHALLENGES = ("solve_and_audit", "sandbox_attacks", "git_hook", "humaneval_predictions", "swebench_grading")


def _docker_answers() -> bool:
    try:
        import docker

        docker.from_env(timeout=5).ping()
    except Exception:
        return False
    return True


def main(argv: list[str]) -> int:
    console = Console()
    names = argv or list(CHALLENGES)
    unknown = [n for n in names if n not in CHALLENGES]
    if unknown:
        console.print(f"[red]unknown challenge(s): {', '.join(unknown)}; known: {', '.join(CHALLENGES)}")
        return 2
    docker_ok = _docker_answers()
    table = Table(title="debatecode challenges")
    for column in ("challenge", "result", "time", "detail"):
        table.add_column(column)
    failed = 0
    for name in names:
        module = importlib.import_module(f"challenges.{name}")
        if module.NEEDS_DOCKER and not docker_ok:
            table.add_row(name, "[red]FAILED", "-", "needs a Docker engine and none answers: start dockerd")
            failed += 1
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
            failed += 1
            detail += "\ncommands:\n" + "\n".join(journey.log) + f"\nscratch folder kept: {workdir}"
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        table.add_row(name, result, f"{time.monotonic() - started:.1f}s", detail)
    console.print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
