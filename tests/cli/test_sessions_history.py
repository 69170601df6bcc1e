"""`sessions diff`, `sessions checkout` and the quality column of `sessions show`, on a real scripted session."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from tests.cli.helpers import SolvedAdd, run_cli


@pytest.fixture(scope="module")
def session(solved_add: SolvedAdd, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A copy of the shared completed `debatecode solve` run on the local sandbox: (its folder, its session id).

    A copy, since the checkout tests write folders into it.
    """
    folder = solved_add.copy_to(tmp_path_factory.mktemp("history") / "solved")
    return folder, solved_add.session_id


def versions(folder: Path, session_id: str) -> list[tuple[int, str, str, str, str]]:
    """(number, agent, code, commit, "phase round N") of every stored version."""
    with sqlite3.connect(folder / ".debatecode" / "debatecode.db") as conn:
        rows = conn.execute(
            "select v.version_number, v.agent_id, v.code, v.commit_sha, t.phase, t.round "
            "from code_versions v join debate_turns t on t.id = v.turn_id "
            "where v.session_id = ? order by v.version_number",
            (session_id,),
        ).fetchall()
    return [(int(n), str(a), str(c), str(s), f"{p} round {r}") for n, a, c, s, p, r in rows]


def test_diff_between_two_versions_is_read_from_the_git_history(session: tuple[Path, str]) -> None:
    folder, session_id = session
    stored = versions(folder, session_id)
    (n1, agent1, code1, _, when1), (n2, agent2, code2, _, when2) = stored[0], stored[1]
    proc = run_cli("sessions", "diff", session_id[:8], "--from", str(n1), "--to", str(n2), cwd=folder)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"from v{n1} {agent1} {when1} (")
    assert lines[1].startswith(f"to   v{n2} {agent2} {when2} (")
    diff = "\n".join(lines[2:]) + "\n"
    assert diff.startswith(f"--- a/candidates/{agent2}.py\n+++ b/candidates/{agent2}.py\n")
    removed = [line[1:] for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
    assert removed and all(line in code1.splitlines() for line in removed)
    assert added and all(line in code2.splitlines() for line in added)


def test_diff_defaults_to_the_final_versions_last_change(session: tuple[Path, str]) -> None:
    folder, session_id = session
    with sqlite3.connect(folder / ".debatecode" / "debatecode.db") as conn:
        (final_id,) = conn.execute(
            "select final_version_id from debate_sessions where id = ?", (session_id,)
        ).fetchone()
        rows = conn.execute(
            "select id, version_number, agent_id, code from code_versions where session_id = ? order by version_number",
            (session_id,),
        ).fetchall()
    final = next(row for row in rows if row[0] == final_id)
    earlier = [row for row in rows if row[2] == final[2] and row[1] < final[1]]
    proc = run_cli("sessions", "diff", session_id, cwd=folder)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1].startswith(f"to   v{final[1]} {final[2]} ")
    if earlier:
        assert lines[0].startswith(f"from v{earlier[-1][1]} {final[2]} ")
    else:
        assert lines[0] == f"from (nothing: first version of {final[2]})"
        assert lines[2:4] == ["--- /dev/null", f"+++ b/candidates/{final[2]}.py"]
        assert [line[1:] for line in lines[5:]] == final[3].splitlines()


def test_diff_refuses_an_unknown_version(session: tuple[Path, str]) -> None:
    folder, session_id = session
    proc = run_cli("sessions", "diff", session_id, "--to", "999", cwd=folder)
    assert proc.returncode == 2
    assert "--to 999" in proc.stderr and "versions: 1," in proc.stderr


def test_checkout_of_a_version_writes_its_code_as_plain_files(session: tuple[Path, str]) -> None:
    folder, session_id = session
    number, agent, code, commit, _ = versions(folder, session_id)[1]
    dest = folder / f"v{number}"
    proc = run_cli("sessions", "checkout", session_id, "--version", str(number), str(dest), cwd=folder)
    assert proc.returncode == 0, proc.stderr
    assert (dest / "candidates" / f"{agent}.py").read_text() == code
    assert not (dest / ".git").exists()
    assert f"at {commit[:10]}" in proc.stdout
    assert f"is {dest / 'candidates' / f'{agent}.py'}" in proc.stdout.replace("\n", "")


def test_checkout_without_a_version_writes_the_branch_tip_with_the_final_outputs(session: tuple[Path, str]) -> None:
    folder, session_id = session
    dest = folder / "tip"
    proc = run_cli("sessions", "checkout", session_id, str(dest), cwd=folder)
    assert proc.returncode == 0, proc.stderr
    assert (dest / "solution.py").read_text() == (folder / "out" / "solution.py").read_text()
    assert (dest / "report.md").is_file()
    tip = subprocess.run(
        ["git", "-C", str(folder / "out"), "rev-parse", f"debate/{session_id}"], capture_output=True, text=True
    ).stdout.strip()
    assert f"at {tip[:10]}" in proc.stdout
    again = run_cli("sessions", "checkout", session_id, str(dest), cwd=folder)
    assert again.returncode == 2 and "not an empty folder" in again.stderr


def test_show_lists_each_versions_quality_score(session: tuple[Path, str]) -> None:
    folder, session_id = session
    with sqlite3.connect(folder / ".debatecode" / "debatecode.db") as conn:
        scored = conn.execute(
            "select version_number, quality_score from code_versions where session_id = ? order by version_number",
            (session_id,),
        ).fetchall()
    proc = run_cli("sessions", "show", session_id, cwd=folder)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if " agent " in line and " quality " in line)
    header = lines[at]
    assert header.index(" tests ") < header.index(" quality ") < header.index(" commit ")
    version_rows = [line for line in lines[at + 1 :] if line.startswith("│")]
    for (_, score), row in zip(scored, version_rows, strict=True):
        assert (f"{score:.2f}" if score is not None else "-") in row


def test_hook_is_listed_in_the_help(tmp_path: Path) -> None:
    proc = run_cli("--help", cwd=tmp_path)
    assert proc.returncode == 0 and "hook" in proc.stdout
    sub = run_cli("hook", "--help", cwd=tmp_path)
    assert "install" in sub.stdout and "run" in sub.stdout
