"""The CLI's fast paths: help, version, and an end-to-end scripted run on the local sandbox.

The scripted run is the shared ``solved_add`` (``conftest.py``); its returncode is checked there.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.cli.helpers import SolvedAdd, run_cli


def test_help_lists_the_commands(tmp_path: Path) -> None:
    proc = run_cli("--help", cwd=tmp_path)
    assert proc.returncode == 0
    for command in ("solve", "sessions", "sandbox"):
        assert command in proc.stdout


def test_importing_the_cli_does_not_import_heavy_modules() -> None:
    code = (
        "import sys, debatecode.cli.app, debatecode;"
        "heavy = [m for m in ('litellm', 'docker', 'sqlalchemy', 'git', 'llama_cpp', 'torch', 'alembic') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_scripted_solve_on_local_sandbox_then_inspect(solved_add: SolvedAdd) -> None:
    folder, proc = solved_add.folder, solved_add.proc
    assert "proposal" in proc.stdout and "convergence" in proc.stdout
    assert "completed" in proc.stdout
    solution = (folder / "out" / "solution.py").read_text()
    namespace: dict[str, object] = {}
    exec(compile(solution, "solution.py", "exec"), namespace)
    assert namespace["add"](2, 3) == 5  # type: ignore[operator]

    listing = run_cli("sessions", "list", cwd=folder)
    assert listing.returncode == 0 and "Add two numbers" in listing.stdout
    with sqlite3.connect(folder / ".debatecode" / "debatecode.db") as conn:
        (session_id,) = conn.execute("select id from debate_sessions").fetchone()
    show = run_cli("sessions", "show", session_id[:6], cwd=folder)
    assert show.returncode == 0
    assert "42 turns" in show.stdout and "code versions" in show.stdout
    log = subprocess.run(
        ["git", "-C", str(folder / "out"), "log", "--oneline", f"debate/{session_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(log.stdout.splitlines()) >= 6


def test_sessions_show_unknown_id(tmp_path: Path) -> None:
    proc = run_cli("sessions", "show", "doesnotexist", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no session matches 'doesnotexist'" in proc.stderr
