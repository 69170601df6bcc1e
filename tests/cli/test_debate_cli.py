"""``debatecode debate`` as a user runs it: a real subprocess over ``scripted:<file.yaml>`` models.

The script file answers every prompt (moderator, debaters, reviewers) with one
well-formed speech, so a debate's outcome is set by the speech's satisfaction:
95 reaches consensus after the two minimum rounds, 50 hits the planned rounds
and escalates.
"""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.cli.crash import kill_when
from tests.cli.helpers import run_cli

from debatecode.task import load_task

QUESTION = "Should we cache product pages in Redis?"
"""Low complexity: two rounds planned; Performance, Operational Simplicity, the four specialists (Observability,
Operations, Testability, Security), the Contrarian and the Moonshot debate it."""
DEBATERS = (
    "performance",
    "operational-simplicity",
    "observability",
    "operations",
    "test",
    "security",
    "contrarian",
    "moonshot",
)


def _speech(satisfaction: int, mark: str = "") -> str:
    return (
        f"Stance: cache the rendered pages in Redis with a short TTL{mark}.\n"
        "Reasons:\n- the product pages are read far more than written\n"
        "Challenge: Contrarian and Moonshot: the invalidation cost needs numbers.\n"
        "Risks:\n- stale prices after an update\n"
        f"Satisfaction: {satisfaction}\n"
        "Ready for synthesis: no\n"
    )


def _script(path: Path, satisfaction: int, *, mark: str = "", delay: float = 0.0, replies: int = 0) -> Path:
    """A script answering with ``_speech``: ``replies`` delayed replies first, then the same speech at once."""
    text = _speech(satisfaction, mark)
    data: dict[str, object] = {"default": text}
    if replies:
        data["replies"] = [{"content": text, "delay": delay} for _ in range(replies)]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _turns(db: Path) -> list[tuple[str, int, str, str, str]]:
    with sqlite3.connect(db) as conn:
        try:
            return list(
                conn.execute("select id, seq, key, content, session_id from debate_turns order by session_id, seq")
            )
        except sqlite3.OperationalError:
            return []  # the store is still being created


def _session(db: Path) -> tuple[str, str, str]:
    with sqlite3.connect(db) as conn:
        [(session_id, status, kind)] = list(conn.execute("select id, status, kind from debate_sessions"))
    return session_id, status, kind


def _expected_keys() -> set[str]:
    """Every turn of a debate that reaches consensus after two rounds."""
    keys = {"r0/analysis/moderator/analyse", "r0/analysis/moderator/perspectives", "r0/synthesis/moderator/synthesise"}
    keys |= {f"r0/positions/{a}/position" for a in DEBATERS} | {f"r0/synthesis_review/{a}/review" for a in DEBATERS}
    for r in (1, 2):
        keys |= {f"r{r}/arguments/{a}/argue" for a in DEBATERS} | {f"r{r}/rebuttals/{a}/rebut" for a in DEBATERS}
        keys |= {f"r{r}/moderation/moderator/summarise", f"r{r}/gate/gate-reviewer/review"}
    return keys


@pytest.fixture(scope="module")
def agreed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A folder where one debate reached consensus, asked for a task skeleton too."""
    cwd = tmp_path_factory.mktemp("agreed")
    script = _script(cwd / "agree.yaml", 95)
    proc = run_cli(
        "debate", QUESTION, "--model", f"scripted:{script}", "--no-checkpoints", "--then-task", "task.md", cwd=cwd
    )
    return cwd, proc


def test_a_debate_writes_its_record_and_a_task_skeleton_solve_accepts(
    agreed: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    cwd, proc = agreed
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [adr] = (cwd / "docs" / "decisions").glob("adr-0001-*.md")
    assert f"Decision record: {adr}" in proc.stdout.replace("\n", "")
    text = adr.read_text()
    assert "- **Status:** accepted" in text and "**Confidence:** HIGH" in text
    session_id, status, kind = _session(cwd / ".debatecode" / "debatecode.db")
    assert (status, kind) == ("completed", "design")
    assert (cwd / ".debatecode" / "debates" / session_id / "metadata.json").is_file()

    task = load_task(cwd / "task.md")
    assert QUESTION in task.description
    assert "cache the rendered pages in Redis" in task.description
    assert task.entry_point


def test_list_shows_the_debate(agreed: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    cwd, _ = agreed
    session_id, _, _ = _session(cwd / ".debatecode" / "debatecode.db")
    proc = run_cli("debate", "--list", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    [row] = [line for line in proc.stdout.splitlines() if session_id in line]
    assert "completed" in row and "HIGH" in row and QUESTION in row and "adr-0001-" in row


def test_list_with_no_debates_says_so(tmp_path: Path) -> None:
    proc = run_cli("debate", "--list", cwd=tmp_path, env={"DEBATECODE_STORE_URL": f"sqlite:///{tmp_path / 'x.db'}"})
    assert proc.returncode == 0, proc.stderr
    assert "No design debates yet" in proc.stdout


def test_bad_front_matter_exits_2_naming_the_file_and_the_key(tmp_path: Path) -> None:
    question = tmp_path / "question.md"
    question.write_text("---\ntitle: Caching\ncolour: blue\n---\nShould we cache product pages in Redis?\n")
    script = _script(tmp_path / "s.yaml", 95)
    proc = run_cli("debate", str(question), "--model", f"scripted:{script}", "--no-checkpoints", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    assert "question.md" in message and "bad front matter" in message and "colour" in message
    assert "known keys: title, perspectives, mode, context" in message
    assert not (tmp_path / "docs").exists()


def test_an_escalated_debate_without_a_human_exits_5_with_the_record_saying_so(tmp_path: Path) -> None:
    script = _script(tmp_path / "split.yaml", 50)
    proc = run_cli("debate", QUESTION, "--model", f"scripted:{script}", "--no-checkpoints", cwd=tmp_path)
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "escalated:" in proc.stderr and "nobody chose an option" in " ".join(proc.stderr.split())
    [adr] = (tmp_path / "docs" / "decisions").glob("adr-0001-*.md")
    text = adr.read_text()
    assert "- **Status:** escalated" in text
    assert "**Reason:** max rounds (2) without consensus" in text
    assert "**Choice:** no decision: non-interactive run" in text
    _, status, _ = _session(tmp_path / ".debatecode" / "debatecode.db")
    assert status == "completed", "the debate ran to its record; the exit status carries the escalation"


@pytest.mark.slow
def test_a_debate_killed_mid_round_resumes_from_its_stored_turns(tmp_path: Path) -> None:
    script = _script(tmp_path / "slow.yaml", 95, mark=" (first run)", delay=0.25, replies=40)
    db = tmp_path / ".debatecode" / "debatecode.db"
    kill_when(
        ["debate", QUESTION, "--model", f"scripted:{script}", "--no-checkpoints"],
        cwd=tmp_path,
        ready=lambda: db.exists() and len(_turns(db)) >= 12,  # phase 1, round 1's arguments and some rebuttals
    )
    before = _turns(db)
    assert 12 <= len(before) < len(_expected_keys()), "killed mid-debate"
    session_id, status, _ = _session(db)
    assert status == "running", "a killed debate is left running, not half-written"
    assert not (tmp_path / "docs").exists()

    # The resumed process reads the script again: its replies are marked, so a re-asked turn would show.
    _script(script, 95, mark=" (resumed run)", delay=0.0, replies=40)
    resumed = run_cli("debate", "--resume", session_id, cwd=tmp_path, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"resuming {session_id}" in resumed.stdout

    after = _turns(db)
    keys = [key for _, _, key, _, _ in after]
    assert len(keys) == len(set(keys)), "no turn stored twice"
    assert set(keys) == _expected_keys()
    assert [seq for _, seq, _, _, _ in after] == list(range(1, len(after) + 1))
    assert after[: len(before)] == before, "the turns stored before the kill are kept as they were"
    reused = {key for _, _, key, _, _ in before}
    for _, _, key, content, _ in after:
        assert "(resumed run)" not in content or key not in reused, key
        if key not in reused and not key.endswith(("/perspectives", "/gate-reviewer/review")):
            assert "(first run)" not in content, f"{key} was answered before the kill but not stored"
    assert any("(resumed run)" in content for *_, content, _ in after)
    _, status, _ = _session(db)
    assert status == "completed"
    [adr] = (tmp_path / "docs" / "decisions").glob("adr-0001-*.md")
    text = adr.read_text()
    assert f"- **Debate ID:** {session_id}" in text
    assert "- **Status:** accepted" in text and "- **Rounds:** 2" in text


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("-p", "nosuch"), "unknown perspective 'nosuch'"),
        (("--perspectives", "1"), "--perspectives 1: the moderator picks 2 to 4 perspectives"),
        (("--perspectives", "9"), "--perspectives 9: the moderator picks 2 to 4 perspectives"),
        (("--perspectives", "0"), "--perspectives 0: the moderator picks 2 to 4 perspectives"),
        (("--perspectives", ","), "names no perspective"),
        (("--perspectives", "3,cost"), "a number is a count, not a name"),
        (("--council", "-p", "cost"), "or drop design.council (--council)"),
        (("question.md",), "unknown perspective 'nosuch'"),
        (("--then-task", "question.md"), "--then-task question.md already exists"),
        (("--then-task", "missing/task.md"), "the folder missing does not exist"),
    ],
    ids=[
        "flag",
        "count-too-small",
        "count-too-large",
        "count-zero",
        "empty-list",
        "count-in-a-list",
        "council-and-names",
        "question-file",
        "then-task-exists",
        "then-task-no-folder",
    ],
)
def test_bad_input_is_refused_before_a_session_is_stored(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    """Issue 31, item 11: `debate -p nosuch` used to leave a session `running` for ever."""
    (tmp_path / "question.md").write_text(f"---\nperspectives: [nosuch]\n---\n{QUESTION}\n")
    script = _script(tmp_path / "s.yaml", 95)
    question = () if args == ("question.md",) else (QUESTION,)
    proc = run_cli("debate", *question, *args, "--model", f"scripted:{script}", "--no-checkpoints", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert says in " ".join(proc.stderr.split())
    listed = run_cli("sessions", "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip() == "[]"


def _debaters(cwd: Path, session_id: str) -> list[str]:
    with sqlite3.connect(cwd / ".debatecode" / "debatecode.db") as conn:
        rows = conn.execute(
            "select agent_id from debate_turns where session_id = ? and phase = 'positions' order by seq", (session_id,)
        )
        return [agent for (agent,) in rows]


def test_a_count_of_perspectives_runs_that_many_beside_the_specialists(tmp_path: Path) -> None:
    """Issue 33: `--perspectives 3` used to be refused (and, before that, left a session `running`)."""
    script = _script(tmp_path / "s.yaml", 95)
    proc = run_cli(
        "debate", QUESTION, "-p", "3", "--model", f"scripted:{script}", "--no-checkpoints", cwd=tmp_path, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    session_id, status, _ = _session(tmp_path / ".debatecode" / "debatecode.db")
    debaters = _debaters(tmp_path, session_id)
    assert status == "completed"
    assert sorted(debaters[3:]) == sorted(["observability", "operations", "test", "security", "contrarian", "moonshot"])
    assert len(debaters) == 3 + 6


def test_the_council_flag_debates_with_the_four_members(tmp_path: Path) -> None:
    script = _script(tmp_path / "s.yaml", 95)
    proc = run_cli(
        "debate", QUESTION, "--council", "--model", f"scripted:{script}", "--no-checkpoints", cwd=tmp_path, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    session_id, _, _ = _session(tmp_path / ".debatecode" / "debatecode.db")
    assert sorted(_debaters(tmp_path, session_id)[:4]) == ["architect", "designer", "engineer", "researcher"]
