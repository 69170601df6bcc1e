"""The acceptance run: scripted replies through the real CLI and the real Docker sandbox."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from tests.cli.helpers import HASHING_MEMORY, REPO, run_cli


@pytest.mark.docker
def test_scripted_solve_in_docker_exits_zero_with_correct_solution(tmp_path: Path, requires_docker: None) -> None:
    proc = run_cli(
        "solve",
        str(REPO / "examples" / "tasks" / "add.md"),
        "--model",
        f"scripted:{REPO / 'examples' / 'replies' / 'add.yaml'}",
        "--sandbox",
        "docker",
        "--out",
        "out",
        cwd=tmp_path,
        env=HASHING_MEMORY,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sandbox docker" in proc.stdout
    namespace: dict[str, object] = {}
    exec(compile((tmp_path / "out" / "solution.py").read_text(), "solution.py", "exec"), namespace)
    assert namespace["add"](10**12, -5) == 10**12 - 5  # type: ignore[operator]

    with sqlite3.connect(tmp_path / ".debatecode" / "debatecode.db") as conn:
        (session_id,) = conn.execute("select id from debate_sessions").fetchone()
        backends = {
            row[0]
            for row in conn.execute(
                "select json_extract(test_results, '$.backend') from debate_turns where test_results is not null and json_extract(test_results, '$.status') != 'skipped'"
            )
        }
    assert backends == {"docker"}
    show = run_cli("sessions", "show", session_id, cwd=tmp_path)
    assert show.returncode == 0 and "42 turns" in show.stdout
    log = subprocess.run(
        ["git", "-C", str(tmp_path / "out"), "log", "--format=%s", f"debate/{session_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    subjects = log.stdout.splitlines()
    assert subjects[0].startswith("report:") and subjects[1].startswith("final: agent-1")
    phases = {s.split(":")[0] for s in subjects}
    assert {"self_evolvement", "proposal", "critique", "optimization", "adversarial"} <= phases
