"""Commits written in process record byte for byte what git's own commands record, and leave a clean, valid repository."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pygit2
import pytest
from tests.vcs.conftest import Git

from debatecode.errors import VersionControlError
from debatecode.vcs import VersionRepository, _commits, _new_repository, worktree
from debatecode.vcs._commits import SessionCommits, ident_text, open_repository, signature
from debatecode.vcs._config import git_config, in_process_blocker
from debatecode.vcs._git import DirectWriteRefused, cleanup_message, reflog_message

WHEN = 1_700_000_000
VERSIONS = [
    ("pkg/sub/solution.py", "x = 1\n", "  proposal:   agent-1 round 1  \n\n\n", {"Agent": "agent-1"}),
    ("pkg/sub/solution.py", "x = 2\n", "critique: agent-2\n\n\n\nwhy   \nbecause", {"Agent": "agent-2"}),
    ("pkg/sub/solution.py", "x = 2\n", "a repeat makes no commit", {}),
    ("candidates/agent-2.py", "def f():\n    return 1", "proposal: agent-2 round 1", {"Phase": "proposal"}),
    ("pkg/other.py", "y = 1\n", "next to a folder", {}),
    ("solution.py", "x = 2\n", "final: agent-2 (3/3 tests)", {"Status": "completed"}),
    ("report.md", "# Report\n\nDone.\n", "report: session completed", {}),
]
LOGS = (
    ".git/logs/HEAD",
    ".git/logs/refs/heads/main",
    ".git/logs/refs/heads/debate/s1",
    ".git/worktrees/s1/logs/HEAD",
    ".git/worktrees/s1/COMMIT_EDITMSG",
)


REFLOG_TIME = re.compile(r"(?m)^([0-9a-f]{40} [0-9a-f]{40} .*>) \d+ [+-]\d{4}")


def fixed_signature(timestamp: int | None = None) -> pygit2.Signature:
    return pygit2.Signature("debatecode", "debatecode@localhost", WHEN, 0)


def without_reflog_times(text: str) -> str:
    """A reflog with its dates left out: libgit2 dates its reflog lines by the clock, which a test cannot fix."""
    return REFLOG_TIME.sub(r"\1 <date>", text)


def make_project(out: Path, git_cli: Git) -> None:
    """A user's repository with history, its objects and refs packed by ``git gc``."""
    out.mkdir(parents=True)
    git_cli(out, "init", "--quiet", "--initial-branch=main")
    (out / "pkg").mkdir()
    (out / "pkg" / "util.py").write_text("u = 1\n")
    (out / "README").write_text("project\n")
    git_cli(out, "add", ".")
    subprocess.run(  # both dates fixed, so that two projects made a second apart are the same
        ["git", "-c", "user.name=u", "-c", "user.email=u@x", "commit", "--quiet", "-m", "start"],
        cwd=out,
        env={**os.environ, "GIT_AUTHOR_DATE": "@1600000000 +0000", "GIT_COMMITTER_DATE": "@1600000000 +0000"},
        check=True,
    )
    git_cli(out, "gc", "--quiet")


def record_session(out: Path) -> list[str]:
    with VersionRepository(out) as repo:
        session = repo.open_session("s1")
        shas = [session.commit_version(path, code, message, trailers) for path, code, message, trailers in VERSIONS]
        session.close(remove_worktree=False)
    return shas


def recorded(out: Path, git_cli: Git) -> dict[str, object]:
    """Everything a session leaves that does not depend on the clock or the disk."""
    objects = git_cli(out, "cat-file", "--batch-all-objects", "--batch-check")
    files = {name: without_reflog_times((out / name).read_text()) for name in LOGS if (out / name).exists()}
    worktree_path = out / ".worktrees" / "s1"
    return {
        "refs": git_cli(out, "for-each-ref", "--format=%(refname) %(objectname)"),
        "objects": sorted(objects.splitlines()),
        "files": files,
        "index": git_cli(worktree_path, "ls-files", "--stage"),
        "log": git_cli(out, "log", "--format=%H %an <%ae> %ad %cn <%ce> %cd%n%B", "debate/s1"),
    }


@pytest.mark.parametrize("existing", [False, True], ids=["new folder", "packed project"])
def test_in_process_commits_are_identical_to_gits(
    existing: bool, tmp_path: Path, git_cli: Git, monkeypatch: pytest.MonkeyPatch, git_processes: list[str]
) -> None:
    by_git, in_process = tmp_path / "by-git", tmp_path / "in-process"
    if existing:
        make_project(by_git, git_cli)
        make_project(in_process, git_cli)

    with monkeypatch.context() as dated:  # a date in the process environment makes git do every commit
        dated.setenv("GIT_AUTHOR_DATE", f"@{WHEN} +0000")
        dated.setenv("GIT_COMMITTER_DATE", f"@{WHEN} +0000")
        git_shas = record_session(by_git)
    assert "commit" in git_processes
    git_processes.clear()

    for module in (_commits, _new_repository):
        monkeypatch.setattr(module, "signature", fixed_signature)
    real_environment = worktree.git_environment
    dates = {"GIT_AUTHOR_DATE": f"@{WHEN} +0000", "GIT_COMMITTER_DATE": f"@{WHEN} +0000"}
    # the same date for the git processes still started (worktree add writes reflog lines too)
    monkeypatch.setattr(worktree, "git_environment", lambda: real_environment() | dates)
    our_shas = record_session(in_process)
    assert "commit" not in git_processes and "add" not in git_processes
    # a packed project's HEAD has files: git's worktree add checks them out
    assert git_processes == ([] if not existing else ["worktree"])

    assert our_shas == git_shas
    assert len(set(our_shas)) == len(VERSIONS) - 1
    ours, theirs = recorded(in_process, git_cli), recorded(by_git, git_cli)
    assert ours == theirs
    for out in (by_git, in_process):
        assert git_cli(out, "fsck", "--strict", "--no-dangling") == ""
        assert git_cli(out / ".worktrees" / "s1", "status", "--porcelain", "--untracked-files=all") == ""
        assert "[debate/s1]" in git_cli(out, "worktree", "list")
    assert git_cli(in_process, "show", "debate/s1:pkg/sub/solution.py") == "x = 2\n"


def test_a_session_written_in_process_resumes_and_is_removed_by_git(
    repo: VersionRepository, out_dir: Path, git_cli: Git
) -> None:
    first = repo.open_session("s1")
    v1 = first.commit_version("solution.py", "x = 1\n", "v1")
    first.close(remove_worktree=True)
    again = repo.open_session("s1")
    assert (again.path / "solution.py").read_text() == "x = 1\n"
    v2 = again.commit_version("solution.py", "x = 2\n", "v2")
    assert git_cli(again.path, "status", "--porcelain") == ""
    assert git_cli(out_dir, "rev-list", "debate/s1").split()[:2] == [v2, v1]
    again.close()
    assert git_cli(out_dir, "fsck", "--strict", "--no-dangling") == ""


def test_an_index_in_version_4_is_written_in_version_4(
    repo: VersionRepository, out_dir: Path, git_cli: Git, git_processes: list[str]
) -> None:
    session = repo.open_session("s1")
    session.commit_version("a.py", "a = 1\n", "v1")
    git_cli(session.path, "update-index", "--index-version", "4")
    git_processes.clear()
    sha = session.commit_version("pkg/b.py", "b = 2\n", "v2")
    assert git_processes == []  # libgit2 reads and writes version 4
    assert (out_dir / ".git" / "worktrees" / "s1" / "index").read_bytes()[:8] == b"DIRC\0\0\0\4"
    assert git_cli(out_dir, "show", f"{sha}:pkg/b.py") == "b = 2\n"
    assert git_cli(session.path, "ls-files", "--stage") == git_cli(
        session.path, "ls-tree", "-r", "--format=%(objectmode) %(objectname) 0\t%(path)", sha
    )
    assert git_cli(session.path, "status", "--porcelain") == ""
    assert git_cli(out_dir, "fsck", "--strict", "--no-dangling") == ""
    session.close()


def test_a_branch_moved_by_another_process_is_not_overwritten(
    repo: VersionRepository, out_dir: Path, git_cli: Git
) -> None:
    session = repo.open_session("s1")
    v1 = session.commit_version("a.py", "a = 1\n", "v1")
    common = out_dir.resolve() / ".git"
    commits = SessionCommits(open_repository(session.path))
    (session.path / "a.py").write_text("a = 2\n")
    with pytest.raises(DirectWriteRefused, match="moved"):  # the branch is not at the parent the commit was made on
        commits.commit("a.py", b"a = 2\n", "v2", parent=git_cli(out_dir, "rev-parse", "main").strip())
    (common / "refs" / "heads" / "debate" / "s1.lock").write_text("")
    with pytest.raises(DirectWriteRefused, match="lock"):
        commits.commit("a.py", b"a = 2\n", "v2", parent=v1)
    with pytest.raises(VersionControlError, match="lock"):  # git, given the commit back, finds the lock too
        session.commit_version("a.py", "a = 2\n", "v2")
    (common / "refs" / "heads" / "debate" / "s1.lock").unlink()
    assert git_cli(out_dir, "rev-parse", "debate/s1").strip() == v1
    assert git_cli(out_dir, "fsck", "--strict", "--no-dangling") == ""
    session.close()


@pytest.mark.parametrize(
    "message",
    ["v1", "  lead\t \n\n\n\nbody  \n\n", "\n\nsubject\r\n\r\nDebate-Session: s1\n", "a\n \n\t\nb\n\n\n", ""],
)
def test_message_cleanup_is_gits_stripspace(message: str, git_cli: Git, tmp_path: Path) -> None:
    result = subprocess.run(["git", "stripspace"], input=message.encode(), capture_output=True, cwd=tmp_path)
    assert cleanup_message(message) == result.stdout.decode()


def test_reflog_message_collapses_whitespace_like_git() -> None:
    assert reflog_message("commit", "  sub   with \t spaces  \nbody") == "commit: sub with spaces"


@pytest.mark.parametrize("zone", ["UTC0", "IST-5:30", "EST5EDT,M3.2.0,M11.1.0", "NPT-5:45"])
def test_identity_date_and_zone_match_gits(zone: str, monkeypatch: pytest.MonkeyPatch, empty_home: Path) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        env = {"TZ": zone, "GIT_COMMITTER_NAME": "debatecode", "GIT_COMMITTER_EMAIL": "debatecode@localhost"}
        for when in (WHEN, 1_688_000_000):  # winter and summer
            output = subprocess.run(
                ["git", "var", "GIT_COMMITTER_IDENT"],
                env={**env, "GIT_COMMITTER_DATE": f"@{when}", "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            assert ident_text(signature(when)) == output
    finally:
        monkeypatch.undo()
        time.tzset()


def test_settings_that_change_what_git_records_hand_commits_to_git(
    out_dir: Path, empty_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with VersionRepository(out_dir):
        pass
    common = out_dir / ".git"
    assert in_process_blocker(git_config(common)) is None
    (empty_home / ".gitconfig").write_text("[commit]\n\tcleanup = verbatim\n")
    assert in_process_blocker(git_config(common)) == "commit.cleanup is set"
    (empty_home / ".gitconfig").write_text("[i18n]\n\tcommitEncoding = ISO-8859-1\n")
    assert in_process_blocker(git_config(common)) == "i18n.commitEncoding is set"
    (empty_home / ".gitconfig").write_text('[includeIf "gitdir:~/"]\n\tpath = other\n')
    assert in_process_blocker(git_config(common)) == "the git configuration includes other files"
    (empty_home / ".gitconfig").unlink()
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_index := out_dir / "other-index"))
    assert in_process_blocker(git_config(common)) == "GIT_INDEX_FILE is set"
    assert not tmp_index.exists()


def test_verbatim_cleanup_is_honoured_through_git(out_dir: Path, empty_home: Path, git_cli: Git) -> None:
    (empty_home / ".gitconfig").write_text("[commit]\n\tcleanup = verbatim\n")
    with VersionRepository(out_dir) as repo:
        session = repo.open_session("s1")
        sha = session.commit_version("a.py", "a = 1\n", "subject   \n\n\n\nbody")
        session.close()
    assert "subject   \n\n\n\nbody" in git_cli(out_dir, "cat-file", "commit", sha)
