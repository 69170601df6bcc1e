"""Commit messages, file history, blame, diffs, exports and worktree clean-up, on real repositories."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from debatecode.errors import VersionControlError
from debatecode.vcs import SessionWorktree, VcsSettings, VersionRepository, version_message

Git = Callable[..., str]


def commit_as(worktree: SessionWorktree, relpath: str, code: str, agent: str, phase: str, round_no: int) -> str:
    message = version_message(
        phase=phase, agent=agent, round_no=round_no, tests_passed=1, tests_total=2, score=0.5, session_id="s1"
    )
    return worktree.commit_version(relpath, code, message.subject, message.trailers)


def test_version_message_states_phase_agent_round_tests_and_score(
    repo: VersionRepository, out_dir: Path, git_cli: Git
) -> None:
    message = version_message(
        phase="critique", agent="agent-2", round_no=2, tests_passed=3, tests_total=5, score=0.8123, turn_id="t9"
    )
    assert message.subject == "critique: agent-2 round 2 (3/5 tests, quality 0.81)"
    assert message.trailers == {
        "Agent": "agent-2",
        "Phase": "critique",
        "Round": "2",
        "Tests": "3/5",
        "Quality-Score": "0.81",
        "Turn": "t9",
    }
    worktree = repo.open_session("s1")
    sha = worktree.commit_version("candidates/agent-2.py", "x = 1\n", message.subject, message.trailers)
    logged = git_cli(
        out_dir,
        "log",
        "-1",
        "--format=%s|%(trailers:key=Phase,valueonly,separator=)|%(trailers:key=Agent,valueonly,separator=)"
        "|%(trailers:key=Quality-Score,valueonly,separator=)|%(trailers:key=Debate-Session,valueonly,separator=)",
        sha,
    )
    assert logged.strip() == "critique: agent-2 round 2 (3/5 tests, quality 0.81)|critique|agent-2|0.81|s1"
    worktree.close()


def test_version_message_without_a_score_and_with_bad_values() -> None:
    message = version_message(phase="proposal", agent="agent-1", round_no=0, tests_passed=0, tests_total=0)
    assert message.subject.endswith("(0/0 tests, quality n/a)")
    assert message.trailers["Quality-Score"] == "n/a"
    assert message.text.startswith(message.subject + "\n\nAgent: agent-1\n")
    with pytest.raises(ValueError, match="between 0 and 1"):
        version_message(phase="p", agent="a", round_no=0, tests_passed=0, tests_total=1, score=1.2)
    with pytest.raises(ValueError, match="inconsistent"):
        version_message(phase="p", agent="a", round_no=0, tests_passed=3, tests_total=1)
    one_line = version_message(
        phase="p", agent="a", round_no=0, tests_passed=0, tests_total=1, extra={"Note": "two\nlines"}
    )
    assert one_line.trailers["Note"] == "two lines"


def test_file_history_lists_the_commits_of_one_file_newest_first(repo: VersionRepository) -> None:
    worktree = repo.open_session("s1")
    first = commit_as(worktree, "candidates/agent-1.py", "v = 1\n", "agent-1", "proposal", 0)
    commit_as(worktree, "candidates/agent-2.py", "w = 1\n", "agent-2", "proposal", 0)
    third = commit_as(worktree, "candidates/agent-1.py", "v = 2\n", "agent-1", "critique", 1)
    history = worktree.file_history("candidates/agent-1.py")
    assert [c.sha for c in history] == [third, first]
    assert [c.trailers["Phase"] for c in history] == ["critique", "proposal"]
    worktree.close()
    assert [c.sha for c in repo.file_history("candidates/agent-1.py", "debate/s1")] == [third, first]


def test_blame_attributes_each_line_to_the_agent_that_wrote_it(repo: VersionRepository) -> None:
    worktree = repo.open_session("s1")
    commit_as(worktree, "solution.py", "def f():\n    return 1\n", "agent-1", "proposal", 0)
    second = commit_as(worktree, "solution.py", "def f():\n    return 2\n", "agent-2", "critique", 1)
    lines = worktree.blame("solution.py")
    assert [(b.line_no, b.content, b.agent) for b in lines] == [
        (1, "def f():", "agent-1"),
        (2, "    return 2", "agent-2"),
    ]
    assert lines[1].commit.sha == second
    worktree.close()
    assert [b.agent for b in repo.blame("solution.py", "debate/s1")] == ["agent-1", "agent-2"]


def test_history_reads_work_after_the_worktree_was_removed(repo: VersionRepository, tmp_path: Path) -> None:
    worktree = repo.open_session("s1")
    one = commit_as(worktree, "candidates/agent-1.py", "a = 1\n", "agent-1", "proposal", 0)
    two = commit_as(worktree, "candidates/agent-2.py", "a = 2\nb = 3\n", "agent-2", "proposal", 0)
    worktree.close(remove_worktree=True)
    assert not worktree.path.exists()
    assert repo.show_file("candidates/agent-1.py", one) == "a = 1\n"
    diff = repo.diff_files((one, "candidates/agent-1.py"), (two, "candidates/agent-2.py"))
    assert diff.splitlines()[:2] == ["--- a/candidates/agent-2.py", "+++ b/candidates/agent-2.py"]
    assert "-a = 1\n+a = 2\n+b = 3\n" in diff
    created = repo.diff_files(None, (one, "candidates/agent-1.py"))
    assert created.startswith("--- /dev/null\n+++ b/candidates/agent-1.py\n")
    assert repo.find_file(two, "a = 1\n") == "candidates/agent-1.py"
    assert repo.find_file(two, "a = 1\n", prefer=("candidates/agent-2.py",)) == "candidates/agent-1.py"
    assert repo.find_file(two, "nowhere\n") is None
    assert repo.resolve("debate/s1") == two
    with pytest.raises(VersionControlError, match="not in commit"):
        repo.show_file("candidates/agent-2.py", one)
    with pytest.raises(VersionControlError, match="no-such-ref"):
        repo.show_file("candidates/agent-1.py", "no-such-ref")
    with pytest.raises(VersionControlError, match="not a file path"):
        repo.show_file("../escape.py", two)


def test_export_writes_plain_files_of_a_commit(repo: VersionRepository, tmp_path: Path, git_cli: Git) -> None:
    worktree = repo.open_session("s1")
    first = commit_as(worktree, "candidates/agent-1.py", "a = 1\n", "agent-1", "proposal", 0)
    commit_as(worktree, "solution.py", "a = 1\n", "agent-1", "final", 1)
    (worktree.path / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (worktree.path / "run.sh").chmod(0o755)
    git_cli(worktree.path, "add", "run.sh")
    git_cli(worktree.path, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--no-verify", "-m", "script")
    worktree.close()
    dest = tmp_path / "export"
    assert repo.export("debate/s1", dest) == ["candidates/agent-1.py", "run.sh", "solution.py"]
    assert not (dest / ".git").exists()
    assert (dest / "solution.py").read_text() == "a = 1\n"
    assert (dest / "run.sh").stat().st_mode & stat.S_IXUSR
    assert repo.export(first, tmp_path / "older") == ["candidates/agent-1.py"]
    with pytest.raises(VersionControlError, match="not an empty folder"):
        repo.export(first, dest)


def test_reading_a_folder_that_holds_no_history_does_not_create_one(tmp_path: Path, empty_home: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    with pytest.raises(VersionControlError, match="no debatecode version history"):
        VersionRepository(folder, create=False)
    assert not (folder / ".git").exists()


@pytest.mark.parametrize(
    ("cleanup", "status", "removed"),
    [
        ("on_success", "completed", True),
        ("on_success", "failed", False),
        ("on_success", "cancelled", False),
        ("always", "failed", True),
        ("never", "completed", False),
    ],
)
def test_cleanup_policy_removes_the_worktree_but_never_the_branch(
    repo: VersionRepository, git_cli: Git, out_dir: Path, cleanup: str, status: str, removed: bool
) -> None:
    settings = VcsSettings(cleanup=cleanup)  # type: ignore[arg-type]
    assert settings.removes_worktree(status) is removed
    worktree = repo.open_session("s1")
    worktree.commit_version("solution.py", "x = 1\n", "v1")
    worktree.close(remove_worktree=settings.removes_worktree(status))
    assert worktree.path.exists() is not removed
    assert "debate/s1" in git_cli(out_dir, "branch", "--list", "debate/*")
    resumed = repo.open_session("s1")  # resumable either way
    assert resumed.path == worktree.path
    resumed.close()


def test_vcs_settings_refuse_unknown_policies() -> None:
    with pytest.raises(ValueError, match="on_success"):
        VcsSettings(cleanup="sometimes")  # type: ignore[arg-type]
