"""How few git processes a session starts, and that the shortcuts record what git's full checks would."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git.cmd
import pytest
from tests.vcs.conftest import Git

from debatecode.vcs import VersionRepository


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """The argument lists of the git processes GitPython starts while the test runs."""
    calls: list[list[str]] = []
    real_popen = git.cmd.safer_popen

    def counting_popen(args: Any, *rest: Any, **kwargs: Any) -> Any:
        calls.append([str(arg) for arg in args])
        return real_popen(args, *rest, **kwargs)

    monkeypatch.setattr(git.cmd, "safer_popen", counting_popen)
    yield calls


def subcommands(calls: list[list[str]]) -> list[str]:
    return [next(arg for arg in call[1:] if not arg.startswith("-")) for call in calls]


def test_a_new_session_in_a_new_folder_starts_few_git_processes(
    out_dir: Path, empty_home: Path, git_calls: list[list[str]]
) -> None:
    with VersionRepository(out_dir) as repo:
        worktree = repo.open_session("s1")
        opened = subcommands(git_calls)
        git_calls.clear()
        worktree.diff_from_previous("solution.py", "x = 1\n")
        worktree.commit_version("solution.py", "x = 1\n", "v1")
        worktree.diff_from_previous("solution.py", "x = 2\n")
        worktree.commit_version("solution.py", "x = 2\n", "v2")
        worktree.commit_version("solution.py", "x = 2\n", "again")
        versions = subcommands(git_calls)
        git_calls.clear()
        worktree.close()
        closed = subcommands(git_calls)
    # init, the first commit and the worktree are written in process
    assert opened == []
    # diffs, new files, changed files and repeats are read and written in process
    assert versions == []
    assert closed == []


def test_versions_seen_by_the_shortcut_match_git(repo: VersionRepository, out_dir: Path, git_cli: Git) -> None:
    worktree = repo.open_session("s1")
    v1 = worktree.commit_version("pkg/solution.py", "x = 1\n", "v1")
    assert worktree.commit_version("pkg/solution.py", "x = 1\n", "same") == v1
    v2 = worktree.commit_version("pkg/solution.py", "x = 2\n", "v2")
    assert worktree.head() == v2 == git_cli(worktree.path, "rev-parse", "HEAD").strip()
    assert git_cli(out_dir, "show", f"{v2}:pkg/solution.py") == "x = 2\n"
    assert git_cli(worktree.path, "status", "--porcelain") == ""
    assert worktree.diff_from_previous("pkg/solution.py", "x = 2\n") == ""
    worktree.close()


def test_a_commit_made_outside_the_session_object_is_seen(repo: VersionRepository, git_cli: Git) -> None:
    worktree = repo.open_session("s1")
    worktree.commit_version("solution.py", "x = 1\n", "v1")
    (worktree.path / "solution.py").write_text("x = 3\n")
    git_cli(worktree.path, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-am", "by hand")
    outside = git_cli(worktree.path, "rev-parse", "HEAD").strip()
    assert worktree.diff_from_previous("solution.py", "x = 3\n") == ""
    assert "-x = 3\n+x = 1\n" in worktree.diff_from_previous("solution.py", "x = 1\n")
    assert worktree.commit_version("solution.py", "x = 3\n", "same as by hand") == outside
    worktree.close()


def test_an_executable_bit_is_committed_as_git_would(repo: VersionRepository, out_dir: Path, git_cli: Git) -> None:
    worktree = repo.open_session("s1")
    v1 = worktree.commit_version("run.py", "print(1)\n", "v1")
    (worktree.path / "run.py").chmod(0o755)
    v2 = worktree.commit_version("run.py", "print(1)\n", "now executable")
    assert v2 != v1
    assert git_cli(out_dir, "ls-tree", v2, "run.py").startswith("100755 blob")
    worktree.close()


def test_an_attributes_file_leaves_the_decision_to_git(repo: VersionRepository, out_dir: Path, git_cli: Git) -> None:
    worktree = repo.open_session("s1")
    worktree.commit_version(".gitattributes", "*.py text eol=lf\n", "normalise line endings")
    v1 = worktree.commit_version("solution.py", "x = 1\n", "v1")
    # git stores "x = 1\r\n" as "x = 1\n": the same blob, so no commit
    assert worktree.commit_version("solution.py", "x = 1\r\n", "crlf") == v1
    assert git_cli(out_dir, "cat-file", "blob", f"{v1}:solution.py") == "x = 1\n"
    worktree.close()
