"""Bad input, unexpected errors and gate rejections, through the real console script.

Every case runs ``debatecode`` in a subprocess (so "no traceback" is what a
user sees) in a fresh folder, whose default store is ``.debatecode/debatecode.db``.
Each asserts the exit status, a short message that names the fix, no traceback,
and that no session is left ``pending`` or ``running``.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.cli.helpers import EXE, REPO, run_cli

ADD = str(REPO / "examples" / "tasks" / "add.md")
REPLIES = str(REPO / "examples" / "replies" / "add.yaml")
FAST = {"DEBATECODE_MEMORY__EMBEDDER": "hashing"}
"""No sentence-transformers load: sessions start in a second."""
DEEP = "[" * 100_000


def _sessions(cwd: Path) -> list[tuple[str, str, str | None]]:
    db = cwd / ".debatecode" / "debatecode.db"
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as conn:
            return list(conn.execute("select id, status, error from debate_sessions"))
    except sqlite3.OperationalError:  # created by a running process, tables not there yet
        return []


def _assert_settled(cwd: Path) -> None:
    left_open = [row for row in _sessions(cwd) if row[1] in ("pending", "running")]
    assert not left_open, f"sessions left open: {left_open}"


def _clean(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Case:
    """One row of the table: files to write, the command, and what the error must say."""

    id: str
    args: tuple[str, ...]
    says: tuple[str, ...]
    files: dict[str, bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    code: int = 2


def _sample(task_id: object, completion: object) -> bytes:
    return (json.dumps({"task_id": task_id, "completion": completion}) + "\n").encode()


SOLVE = ("solve", ADD, "--model", f"scripted:{REPLIES}", "--sandbox", "local")

CASES = [
    Case(
        "config-not-utf8",
        SOLVE,
        ("debatecode.toml is not valid UTF-8", "save it as UTF-8"),
        files={"debatecode.toml": b'model = "\xff\xfe"\n'},
    ),
    Case(
        "env-table-not-json",
        SOLVE,
        ("DEBATECODE_SANDBOX is not valid JSON", "DEBATECODE_SANDBOX__BACKEND=", "unset DEBATECODE_SANDBOX"),
        env={"DEBATECODE_SANDBOX": "notjson"},
    ),
    Case(
        "env-mapping-not-json",
        SOLVE,
        ("DEBATECODE_MODELS is not valid JSON", "put a JSON object in DEBATECODE_MODELS"),
        env={"DEBATECODE_MODELS": "red=x"},
    ),
    Case(
        "scripted-replies-binary",
        ("solve", ADD, "--model", "scripted:replies.yaml", "--sandbox", "local"),
        ("replies.yaml: not a YAML text file: not valid UTF-8", "save it as UTF-8 YAML"),
        files={"replies.yaml": bytes(range(256)) * 8},
    ),
    Case(
        "scripted-replies-deep",
        ("solve", ADD, "--model", "scripted:replies.yaml", "--sandbox", "local"),
        ("replies.yaml: invalid YAML: nested too deeply",),
        files={"replies.yaml": DEEP.encode()},
    ),
    Case(
        "task-not-utf8",
        ("solve", "task.md", "--model", f"scripted:{REPLIES}", "--sandbox", "local"),
        ("task.md: not valid UTF-8", "fix: save the file as UTF-8"),
        files={"task.md": b"---\ntitle: \xff\n---\n"},
    ),
    Case(
        "task-20mb",
        ("solve", "task.md", "--model", f"scripted:{REPLIES}", "--sandbox", "local"),
        ("task.md: the task file is larger than 256 KiB", "task_max_bytes"),
        files={"task.md": Path(ADD).read_bytes() + b"x" * 20_000_000},
    ),
    Case(
        "task-over-configured-cap",
        SOLVE,
        ("add.md: the task file is larger than 100 bytes", "raise `task_max_bytes`"),
        files={"debatecode.toml": b"task_max_bytes = 100\n"},
    ),
    Case(
        "task-front-matter-deep",
        ("solve", "task.md", "--model", f"scripted:{REPLIES}", "--sandbox", "local"),
        ("task.md:2: front matter is nested too deeply",),
        files={"task.md": f"---\ntitle: {DEEP}\nentry_point: f\n---\nDo.\n".encode()},
    ),
    Case(
        "unknown-reviewer-role",
        SOLVE,
        ("review.reviewers.1", "'nosuch' is not a known role", "judge", "security", "contrarian"),
        files={"debatecode.toml": b'[review]\nreviewers = ["judge", "nosuch"]\n'},
    ),
    Case(
        "tool-role-as-reviewer",
        SOLVE,
        ("'executor' is a tool role, played by the sandbox", "roles a model can play"),
        env={"DEBATECODE_REVIEW__REVIEWERS": '["executor"]'},
    ),
    Case(
        "unknown-optimizer-role",
        SOLVE,
        ("optimization.roles.0", "'speedster' is not a known role"),
        files={"debatecode.toml": b'[optimization]\nroles = ["speedster"]\n'},
    ),
    Case(
        "unknown-role-in-models",
        (*SOLVE, "--models", "jugde=scripted/x"),
        ("models.jugde", "'jugde' is not a known role", "judge"),
    ),
    Case("memory-search-empty", ("memory", "search", ""), ("the search query is empty", 'memory search "off by one"')),
    Case("memory-search-blank", ("memory", "search", "  "), ("the search query is empty",)),
    Case(
        "predictions-binary",
        ("bench", "humaneval", "--predictions", "p.jsonl", "--sandbox", "local"),
        ("p.jsonl is not UTF-8 text", "one {"),
        files={"p.jsonl": bytes(range(128, 256)) * 4},
    ),
    Case(
        "predictions-list-task-id",
        ("bench", "humaneval", "--predictions", "p.jsonl", "--sandbox", "local"),
        ("p.jsonl:1: not a sample: `task_id` must be a string, not a JSON array",),
        files={"p.jsonl": _sample(["HumanEval/0"], "    return 1\n")},
    ),
    Case(
        "predictions-int-completion",
        ("bench", "humaneval", "--predictions", "p.jsonl", "--sandbox", "local"),
        ("p.jsonl:2: not a sample: `completion` must be a string, not a JSON number",),
        files={"p.jsonl": _sample("HumanEval/0", "    return 1\n") + _sample("HumanEval/1", 5)},
    ),
    Case(
        "predictions-deep-nesting",
        ("bench", "humaneval", "--predictions", "p.jsonl", "--sandbox", "local"),
        ("p.jsonl:1: not a sample: not JSON", '{"task_id": "HumanEval/0", "completion": "<code>"}'),
        files={"p.jsonl": DEEP.encode()},
    ),
    Case(
        "predictions-no-known-ids",
        ("bench", "humaneval", "--predictions", "p.jsonl", "--sandbox", "local"),
        ("none of the 1 samples in p.jsonl is for a chosen problem", "'Foo/1'", "HumanEval/0 to HumanEval/163"),
        files={"p.jsonl": _sample("Foo/1", "")},
    ),
    Case(
        "predictions-none-for-chosen",
        ("bench", "humaneval", "--predictions", "p.jsonl", "--problems", "3", "--sandbox", "local"),
        ("is for a chosen problem", "the 1 chosen problems", "--problems / --limit"),
        files={"p.jsonl": _sample("HumanEval/0", "")},
    ),
    Case(
        "predictions-empty",
        ("bench", "humaneval", "--predictions", "p.jsonl", "--sandbox", "local"),
        ("p.jsonl has no samples",),
        files={"p.jsonl": b"\n\n"},
    ),
    Case(
        "replay-not-an-audit-trail",
        ("sessions", "replay", "trail.json", "--sandbox", "local"),
        ("trail.json is not a debatecode audit trail", "debatecode sessions audit ID -o FILE"),
        files={"trail.json": b'{"task": {"path": "t.md"}}'},
    ),
    Case(
        "replay-binary-trail",
        ("sessions", "replay", "trail.json", "--sandbox", "local"),
        ("trail.json is not UTF-8 JSON",),
        files={"trail.json": bytes(range(128, 256))},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    for name, content in case.files.items():
        (tmp_path / name).write_bytes(content)
    proc = run_cli(*case.args, cwd=tmp_path, env={**FAST, **case.env}, timeout=120)
    output = proc.stdout + proc.stderr
    assert proc.returncode == case.code, output
    assert "Traceback" not in output
    error = [line for line in proc.stderr.splitlines() if line.strip()]
    assert error and error[0].startswith("error: "), proc.stderr
    assert len(error) <= 3, f"more than a short message:\n{proc.stderr}"
    for phrase in case.says:
        assert phrase in _clean(proc.stderr), f"{phrase!r} not in:\n{proc.stderr}"
    _assert_settled(tmp_path)


# --- unexpected errors: the global error boundary ------------------------------------------------

_FAULTY_CLI = """
import sys
from debatecode.protocol import engine, phases

async def broken_phase(self, run, round_no):
    raise RuntimeError("injected fault in the phase\\nsecond line")

def broken_roster(self, *args, **kwargs):
    raise KeyError("injected fault before the session started")

if sys.argv[1] == "phase":
    phases.self_evolvement.SelfEvolvementPhase.execute = broken_phase
else:
    engine.DebateEngine._build_run = broken_roster
sys.argv[0:2] = ["debatecode"]
from debatecode.cli.app import main
main()
"""


def _run_faulty(fault: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``debatecode ARGS`` with a bug injected: in a phase (session ``running``) or before it starts (``pending``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", **FAST})
    script = cwd / "faulty_cli.py"
    script.write_text(_FAULTY_CLI)
    return subprocess.run(
        [sys.executable, str(script), fault, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    ("fault", "message", "stored"),
    [
        ("phase", "unexpected RuntimeError: injected fault in the phase", "RuntimeError: injected fault in the phase"),
        ("roster", "unexpected KeyError: 'injected fault before the session started'", "KeyError: 'injected fault"),
    ],
    ids=["while-running", "while-pending"],
)
def test_unexpected_error_is_one_line_exit_3_and_fails_the_session(
    tmp_path: Path, fault: str, message: str, stored: str
) -> None:
    quiet = _run_faulty(fault, *SOLVE, cwd=tmp_path)
    assert quiet.returncode == 3, quiet.stderr
    assert "Traceback" not in quiet.stdout + quiet.stderr
    errors = [line for line in quiet.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0] and "-v" in errors[0], quiet.stderr
    assert "second line" not in quiet.stderr
    rows = _sessions(tmp_path)
    assert len(rows) == 1 and rows[0][1] == "failed" and stored in (rows[0][2] or ""), rows

    for verbose in (("solve", "-v"), ("-v", "solve")):  # the command's -v and the root's
        loud = _run_faulty(fault, *verbose, *SOLVE[1:], cwd=tmp_path)
        assert loud.returncode == 3, loud.stderr
        assert "Traceback (most recent call last)" in loud.stderr
        assert message in _clean(loud.stderr)
    assert [row[1] for row in _sessions(tmp_path)] == ["failed"] * 3


# --- approval gates: a rejection exits 4 ---------------------------------------------------------

_GATES = '[gates]\nenabled = true\nphases = ["proposal"]\npoll_s = 0.1\n'


def test_gate_timing_out_as_rejection_exits_4(tmp_path: Path) -> None:
    (tmp_path / "debatecode.toml").write_text(_GATES + "timeout_s = 0.3\n")
    proc = run_cli(*SOLVE, cwd=tmp_path, env=FAST, timeout=300)
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    text = _clean(proc.stderr)
    assert "rejected: the proposal gate timed out" in text and "counts as a rejection" in text
    assert "gates.timeout_s" in text
    rows = _sessions(tmp_path)
    assert [row[1] for row in rows] == ["cancelled"]


def _wait_for(check: Callable[[], str | None], seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"nothing after {seconds}s")


def _pending_gate(cwd: Path) -> str | None:
    db = cwd / ".debatecode" / "debatecode.db"
    if not db.exists():
        return None
    try:
        with sqlite3.connect(db) as conn:
            rows = list(conn.execute("select session_id from gate_decisions where status = 'pending'"))
    except sqlite3.OperationalError:  # tables not created yet
        return None
    return rows[0][0] if rows else None


def _spawn(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", **FAST})
    return subprocess.Popen(
        [str(EXE), *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_human_rejection_at_a_gate_exits_4(tmp_path: Path) -> None:
    (tmp_path / "debatecode.toml").write_text(_GATES + "timeout_s = 120\n")
    solving = _spawn(*SOLVE, cwd=tmp_path)
    try:
        session_id = _wait_for(lambda: _pending_gate(tmp_path), 120)
        decided = run_cli(
            "sessions", "reject", session_id, "--reason", "wrong approach", "--reviewer", "alice", cwd=tmp_path
        )
        assert decided.returncode == 0, decided.stderr
        _out, err = solving.communicate(timeout=120)
    finally:
        solving.kill()
    assert solving.returncode == 4, err
    assert "rejected at the proposal gate by alice: wrong approach" in _clean(err)
    assert "Traceback" not in err
    assert [row[1] for row in _sessions(tmp_path)] == ["cancelled"]


def test_sigterm_stops_the_session_as_cancelled(tmp_path: Path) -> None:
    (tmp_path / "slow.yaml").write_text(
        'default: "```python\\ndef add(a, b):\\n    return a + b\\n```"\nreplies:\n  - content: slow\n    delay: 60\n'
    )
    solving = _spawn("solve", ADD, "--model", "scripted:slow.yaml", "--sandbox", "local", "--agents", "1", cwd=tmp_path)
    try:
        _wait_for(lambda: "yes" if any(row[1] == "running" for row in _sessions(tmp_path)) else None, 120)
        solving.send_signal(signal.SIGTERM)
        _out, err = solving.communicate(timeout=60)
    finally:
        solving.kill()
    assert solving.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert [row[1:] for row in _sessions(tmp_path)] == [("cancelled", "interrupted by the user")]
