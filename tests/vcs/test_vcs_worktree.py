"""Per-session git worktrees and branches, checked against real repositories and the git CLI."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from git import GitCommandError
from tests.support.threads import errors_in_threads

import debatecode.vcs
from debatecode.errors import VersionControlError
from debatecode.vcs import CommitInfo, SessionWorktree, VersionRepository

Git = Callable[..., str]
TRAILERS = {"Agent": "agent-1", "Phase": "proposal", "Tests": "3/5"}


def branch_shas(git_cli: Git, out_dir: Path, branch: str) -> list[str]:
    return git_cli(out_dir, "log", "--format=%H", branch).split()


def test_open_session_creates_worktree_on_its_branch(repo: VersionRepository, out_dir: Path, git_cli: Git) -> None:
    worktree = repo.open_session("s1")
    assert worktree.path == out_dir.resolve() / ".worktrees" / "s1"
    assert worktree.path.is_dir()
    assert git_cli(worktree.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "debate/s1"
    assert "debate/s1" in git_cli(out_dir, "branch", "--list", "debate/*")
    assert str(worktree.path) in git_cli(out_dir, "worktree", "list")
    assert git_cli(out_dir, "log", "--format=%s", "main").strip() == "debatecode: start version history"
    assert ".worktrees/" in (out_dir / ".git" / "info" / "exclude").read_text().splitlines()
    assert git_cli(out_dir, "status", "--porcelain") == ""
    worktree.close()


def test_opening_twice_adds_the_exclude_line_once(out_dir: Path, empty_home: Path) -> None:
    VersionRepository(out_dir).close()
    VersionRepository(out_dir).close()
    lines = (out_dir / ".git" / "info" / "exclude").read_text().splitlines()
    assert lines.count(".worktrees/") == 1


def test_a_folder_with_files_becomes_a_repository_leaving_them_untracked(
    out_dir: Path, empty_home: Path, git_cli: Git
) -> None:
    out_dir.mkdir()
    (out_dir / "report.md").write_text("old report\n")
    with VersionRepository(out_dir):
        pass
    assert git_cli(out_dir, "rev-list", "--count", "main").strip() == "1"
    assert git_cli(out_dir, "ls-tree", "-r", "--name-only", "main") == ""
    assert git_cli(out_dir, "status", "--porcelain").strip() == "?? report.md"
    assert (out_dir / "report.md").read_text() == "old report\n"


def test_an_existing_repository_keeps_its_history_and_branches_start_at_head(
    out_dir: Path, empty_home: Path, git_cli: Git
) -> None:
    out_dir.mkdir()
    git_cli(out_dir, "init", "--quiet", "--initial-branch=main")
    (out_dir / "README").write_text("project\n")
    git_cli(out_dir, "add", "README")
    git_cli(out_dir, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "--quiet", "-m", "project start")
    head = git_cli(out_dir, "rev-parse", "HEAD").strip()
    with VersionRepository(out_dir) as repo:
        worktree = repo.open_session("s1")
        assert worktree.head() == head
        assert (worktree.path / "README").read_text() == "project\n"
        worktree.close()
    assert git_cli(out_dir, "rev-list", "--count", "main").strip() == "1"


def test_each_commit_appears_in_git_log_of_the_session_branch(
    repo: VersionRepository, out_dir: Path, git_cli: Git
) -> None:
    worktree = repo.open_session("s1")
    contents = ["def f():\n    return 1\n", "def f():\n    return 2\n", "def f():\n    return 3"]
    shas = [worktree.commit_version("solution.py", code, f"version {i}") for i, code in enumerate(contents, 1)]
    logged = branch_shas(git_cli, out_dir, "debate/s1")
    assert logged[:3] == list(reversed(shas))
    assert len(logged) == 4  # plus the initial commit
    for sha, code in zip(shas, contents, strict=True):
        assert git_cli(out_dir, "show", f"{sha}:solution.py") == code
    assert [commit.sha for commit in worktree.log()][:3] == list(reversed(shas))
    assert git_cli(out_dir, "log", "--format=%an <%ae>|%cn <%ce>", "-1", "debate/s1").strip() == (
        "debatecode <debatecode@localhost>|debatecode <debatecode@localhost>"
    )
    worktree.close()


def test_identical_content_does_not_create_an_empty_commit(
    repo: VersionRepository, out_dir: Path, git_cli: Git
) -> None:
    worktree = repo.open_session("s1")
    first = worktree.commit_version("solution.py", "x = 1\n", "v1", {"Agent": "agent-1"})
    count = git_cli(out_dir, "rev-list", "--count", "debate/s1")
    again = worktree.commit_version("solution.py", "x = 1\n", "same code from agent-2", {"Agent": "agent-2"})
    assert again == first
    assert git_cli(out_dir, "rev-list", "--count", "debate/s1") == count
    assert git_cli(worktree.path, "status", "--porcelain") == ""
    worktree.close()


def test_trailers_are_real_git_trailers(repo: VersionRepository, out_dir: Path, git_cli: Git) -> None:
    worktree = repo.open_session("s1")
    sha = worktree.commit_version("solution.py", "x = 1\n", "agent-1 proposes", TRAILERS)
    parsed = git_cli(out_dir, "log", "-1", "--format=%(trailers:only,unfold)", sha).strip().splitlines()
    assert parsed == ["Debate-Session: s1", "Agent: agent-1", "Phase: proposal", "Tests: 3/5"]
    assert git_cli(out_dir, "log", "-1", "--format=%s", sha).strip() == "agent-1 proposes"
    newest = worktree.log()[0]
    assert isinstance(newest, CommitInfo)
    assert newest.sha == sha
    assert dict(newest.trailers) == {"Debate-Session": "s1", **TRAILERS}
    assert newest.author_email == "debatecode@localhost"
    assert newest.committed_at.tzinfo is not None
    worktree.close()


def test_bad_trailers_are_refused(repo: VersionRepository) -> None:
    worktree = repo.open_session("s1")
    with pytest.raises(VersionControlError, match="single line"):
        worktree.commit_version("a.py", "x", "m", {"Agent": "a\nb"})
    with pytest.raises(VersionControlError, match="trailer key"):
        worktree.commit_version("a.py", "x", "m", {"Bad Key": "v"})
    with pytest.raises(VersionControlError, match="Debate-Session"):
        worktree.commit_version("a.py", "x", "m", {"Debate-Session": "other"})
    worktree.close()


def test_resume_reuses_the_branch_and_continues_its_history(
    repo: VersionRepository, out_dir: Path, git_cli: Git
) -> None:
    first = repo.open_session("s1")
    v1 = first.commit_version("solution.py", "x = 1\n", "v1")
    first.close(remove_worktree=True)

    resumed = repo.open_session("s1")
    assert resumed.head() == v1
    assert (resumed.path / "solution.py").read_text() == "x = 1\n"
    v2 = resumed.commit_version("solution.py", "x = 2\n", "v2")
    assert git_cli(out_dir, "rev-parse", f"{v2}^").strip() == v1
    resumed.close(remove_worktree=False)

    reattached = repo.open_session("s1")
    assert reattached.path == resumed.path
    assert reattached.head() == v2
    reattached.close()
    assert branch_shas(git_cli, out_dir, "debate/s1")[:2] == [v2, v1]


def test_resume_after_the_worktree_folder_vanished(repo: VersionRepository, out_dir: Path) -> None:
    import shutil

    worktree = repo.open_session("s1")
    v1 = worktree.commit_version("solution.py", "x = 1\n", "v1")
    worktree.close(remove_worktree=False)
    shutil.rmtree(worktree.path)
    again = repo.open_session("s1")
    assert again.head() == v1
    assert (again.path / "solution.py").read_text() == "x = 1\n"
    again.close()


def test_a_new_repository_object_resumes_an_existing_session(out_dir: Path, empty_home: Path) -> None:
    with VersionRepository(out_dir) as repo:
        worktree = repo.open_session("s1")
        v1 = worktree.commit_version("solution.py", "x = 1\n", "v1")
        worktree.close(remove_worktree=False)
    with VersionRepository(out_dir) as reopened:
        worktree = reopened.open_session("s1")
        assert worktree.head() == v1
        worktree.close()


def test_resume_after_the_out_dir_was_moved(out_dir: Path, tmp_path: Path, empty_home: Path) -> None:
    with VersionRepository(out_dir) as repo:
        worktree = repo.open_session("s1")
        v1 = worktree.commit_version("solution.py", "x = 1\n", "v1")
        worktree.close(remove_worktree=False)
    moved = tmp_path / "moved-out"
    out_dir.rename(moved)
    with VersionRepository(moved) as repo:
        again = repo.open_session("s1")
        assert again.path == moved.resolve() / ".worktrees" / "s1"
        assert again.head() == v1
        v2 = again.commit_version("solution.py", "x = 2\n", "v2")
        assert [commit.sha for commit in again.log()][:2] == [v2, v1]
        again.close()


def test_two_sessions_in_one_out_dir_get_separate_branches(
    repo: VersionRepository, out_dir: Path, git_cli: Git
) -> None:
    one, two = repo.open_session("s1"), repo.open_session("s2")
    sha1 = one.commit_version("solution.py", "one\n", "from s1")
    sha2 = two.commit_version("solution.py", "two\n", "from s2")
    assert one.path != two.path
    assert repo.session_branches() == ["debate/s1", "debate/s2"]
    assert sha1 in branch_shas(git_cli, out_dir, "debate/s1")
    assert sha1 not in branch_shas(git_cli, out_dir, "debate/s2")
    assert sha2 not in branch_shas(git_cli, out_dir, "debate/s1")
    assert git_cli(out_dir, "show", "debate/s1:solution.py") == "one\n"
    assert git_cli(out_dir, "show", "debate/s2:solution.py") == "two\n"
    one.close()
    two.close()


def test_concurrent_sessions_from_separate_repository_objects(out_dir: Path, empty_home: Path, git_cli: Git) -> None:
    VersionRepository(out_dir).close()

    def debate(session_id: str) -> None:
        with VersionRepository(out_dir) as repo:
            worktree = repo.open_session(session_id)
            for i in range(5):
                worktree.commit_version("solution.py", f"{session_id} {i}\n", f"v{i}")
            worktree.close()

    assert errors_in_threads(debate, [f"s{n}" for n in range(4)]) == []
    for n in range(4):
        assert git_cli(out_dir, "rev-list", "--count", f"debate/s{n}").strip() == "6"
        assert git_cli(out_dir, "show", f"debate/s{n}:solution.py") == f"s{n} 4\n"


def test_close_removes_the_worktree_but_keeps_the_branch(repo: VersionRepository, out_dir: Path, git_cli: Git) -> None:
    worktree = repo.open_session("s1")
    sha = worktree.commit_version("solution.py", "x = 1\n", "v1")
    (worktree.path / "scratch.txt").write_text("uncommitted")
    worktree.close(remove_worktree=True)
    worktree.close(remove_worktree=True)
    assert not worktree.path.exists()
    assert str(worktree.path) not in git_cli(out_dir, "worktree", "list")
    assert git_cli(out_dir, "rev-parse", "debate/s1").strip() == sha
    assert repo.log("debate/s1")[0].sha == sha
    with pytest.raises(VersionControlError, match="closed"):
        worktree.commit_version("solution.py", "x = 2\n", "v2")


def test_commits_work_without_any_git_identity(out_dir: Path, empty_home: Path, git_cli: Git) -> None:
    no_identity = subprocess.run(["git", "config", "user.email"], capture_output=True, text=True, cwd=empty_home)
    assert no_identity.returncode != 0, "the test HOME must not provide a git identity"
    assert list(empty_home.iterdir()) == []
    with VersionRepository(out_dir) as repo:
        worktree = repo.open_session("s1")
        sha = worktree.commit_version("solution.py", "x = 1\n", "v1")
        worktree.close()
    assert git_cli(out_dir, "log", "-1", "--format=%an <%ae>", sha).strip() == "debatecode <debatecode@localhost>"


def test_the_users_git_config_cannot_change_what_is_recorded(out_dir: Path, empty_home: Path, git_cli: Git) -> None:
    hooks = empty_home / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "commit-msg", "post-commit"):
        (hooks / hook).write_text("#!/bin/sh\necho hook ran >&2\nexit 1\n")
        (hooks / hook).chmod(0o755)
    (empty_home / ".gitconfig").write_text(
        "[user]\n\tuseConfigOnly = true\n"
        "[commit]\n\tgpgsign = true\n"
        "[gpg]\n\tprogram = /bin/false\n"
        f"[core]\n\thooksPath = {hooks}\n\tautocrlf = true\n"
        "[init]\n\tdefaultBranch = trunk\n"
    )
    scratch = empty_home.parent / "scratch"
    git_cli(empty_home.parent, "init", "--quiet", str(scratch))
    plain_commit = subprocess.run(
        ["git", "-c", "user.name=u", "-c", "user.email=u@x", "commit", "--allow-empty", "-m", "x"],
        cwd=scratch,
        capture_output=True,
    )
    assert plain_commit.returncode != 0, "this config must break an ordinary commit"
    with VersionRepository(out_dir) as repo:
        worktree = repo.open_session("s1")
        sha = worktree.commit_version("solution.py", "a\r\nb\n", "v1")
        worktree.close()
    assert git_cli(out_dir, "symbolic-ref", "--short", "HEAD").strip() == "main"
    raw = subprocess.run(["git", "cat-file", "blob", f"{sha}:solution.py"], cwd=out_dir, capture_output=True)
    assert raw.stdout == b"a\r\nb\n"


def test_diff_from_previous_is_a_unified_diff_against_the_committed_file(repo: VersionRepository, git_cli: Git) -> None:
    worktree = repo.open_session("s1")
    created = worktree.diff_from_previous("pkg/solution.py", "x = 1\n")
    assert created.splitlines()[:2] == ["--- /dev/null", "+++ b/pkg/solution.py"]
    assert "+x = 1" in created
    worktree.commit_version("pkg/solution.py", "x = 1\ny = 2\n", "v1")
    assert worktree.diff_from_previous("pkg/solution.py", "x = 1\ny = 2\n") == ""
    new = "x = 1\ny = 3"
    diff = worktree.diff_from_previous("pkg/solution.py", new)
    assert diff.startswith("--- a/pkg/solution.py\n+++ b/pkg/solution.py\n@@")
    assert "-y = 2\n+y = 3\n\\ No newline at end of file\n" in diff
    patch = worktree.path.parent / "change.patch"
    patch.write_text(diff)
    git_cli(worktree.path, "apply", str(patch))
    assert (worktree.path / "pkg" / "solution.py").read_text() == new
    worktree.close()


def test_paths_and_ids_that_escape_are_refused(repo: VersionRepository, out_dir: Path) -> None:
    worktree = repo.open_session("s1")
    for relpath in ("../evil.py", "/etc/passwd", "", ".git/config", "a/../../b"):
        with pytest.raises(VersionControlError):
            worktree.commit_version(relpath, "x", "m")
    (worktree.path / "link").symlink_to(out_dir.parent)
    with pytest.raises(VersionControlError, match="symlink"):
        worktree.commit_version("link/evil.py", "x", "m")
    for session_id in ("a/b", "..", "-rf", "x.lock", "", "a b"):
        with pytest.raises(VersionControlError, match="cannot name a branch"):
            repo.open_session(session_id)
    worktree.close()


def test_git_failures_become_version_control_errors_naming_the_path(
    repo: VersionRepository, out_dir: Path, tmp_path: Path, empty_home: Path
) -> None:
    with pytest.raises(VersionControlError, match="debate/missing") as caught:
        repo.log("debate/missing")
    assert str(out_dir.resolve()) in str(caught.value)
    assert isinstance(caught.value.__cause__, GitCommandError)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(VersionControlError, match="a-file"):
        VersionRepository(blocker)
    occupied = out_dir / ".worktrees" / "s9"
    occupied.mkdir(parents=True)
    (occupied / "stray.txt").write_text("x")
    with pytest.raises(VersionControlError, match="not a git worktree"):
        repo.open_session("s9")


def test_libgit2_failures_become_version_control_errors_naming_the_path(repo: VersionRepository) -> None:
    worktree = repo.open_session("s1")
    worktree.commit_version("a.py", "a = 1\n", "v1")
    (repo.path / ".git" / "refs" / "heads" / "debate" / "s1").write_text("f" * 40 + "\n")  # a commit that is not there
    with pytest.raises(VersionControlError, match="is missing") as caught:
        worktree.diff_from_previous("a.py", "a = 2\n")
    assert str(worktree.path) in str(caught.value)
    assert isinstance(caught.value.__cause__, pygit2.GitError)
    worktree.close()


def test_vcs_package_exports_exactly_its_public_api() -> None:
    assert debatecode.vcs.__all__ == [
        "BlameLine",
        "CommitInfo",
        "SessionWorktree",
        "VcsSettings",
        "VersionMessage",
        "VersionRepository",
        "version_message",
    ]
    assert debatecode.vcs.VersionRepository is VersionRepository
    assert debatecode.vcs.SessionWorktree is SessionWorktree
