"""A session's repository, worktree and its removal, written in process, leave exactly the files git's commands leave."""

from __future__ import annotations

import hashlib
import re
import shutil
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pygit2
import pytest
from tests.vcs.conftest import Git

from debatecode.errors import VersionControlError
from debatecode.vcs import VersionRepository, _commits, _config, _linked_worktrees, _new_repository
from debatecode.vcs._commits import open_repository
from debatecode.vcs._config import git_config, init_blocker
from debatecode.vcs._git import DirectWriteRefused

WHEN = 1_700_000_000
REPO_ROOT = Path(__file__).resolve().parents[2]
LOOSE_OBJECT = re.compile(r"\.git/objects/[0-9a-f]{2}/[0-9a-f]{38}")
STAT_BYTES = 24  # an index entry's ctime, mtime, device and inode: they differ between two folders


GONE = "gitdir file points to non-existent location"  # git's reason to prune a worktree whose folder is gone
CACHE_EXTENSIONS = {b"TREE", b"UNTR", b"EOIE", b"IEOT"}  # caches git rebuilds when it needs them
REFLOG_TIME = re.compile(rb"(?m)^([0-9a-f]{40} [0-9a-f]{40} [^\n]*>) \d+ [+-]\d{4}")


def fixed_signature(timestamp: int | None = None) -> pygit2.Signature:
    return pygit2.Signature("debatecode", "debatecode@localhost", WHEN, 0)


@pytest.fixture
def in_process_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process commit dates fixed at ``WHEN`` (git's are fixed through its environment).

    libgit2 dates its reflog lines by the clock: ``snapshot`` leaves reflog dates out.
    """
    for module in (_commits, _new_repository):
        monkeypatch.setattr(module, "signature", fixed_signature)


def _normalised_index(path: Path) -> object:
    """An index's version, entries without their stat data, and extensions other than caches (versions 2 and 3)."""
    data = path.read_bytes()
    assert hashlib.sha1(data[:-20]).digest() == data[-20:]
    signature, version, count = struct.unpack_from(">4sLL", data)
    assert signature == b"DIRC" and version in (2, 3)
    entries, offset = [], 12
    for _ in range(count):
        (flags,) = struct.unpack_from(">H", data, offset + 60)
        fixed = 62 + (2 if flags & 0x4000 else 0)
        name_end = data.index(b"\0", offset + fixed)
        size = (name_end - offset + 8) & ~7  # the entry with its name, NUL-padded to a multiple of 8
        entries.append(data[offset + STAT_BYTES : offset + size])
        offset += size
    extensions = []
    while offset < len(data) - 20:
        name, size = struct.unpack_from(">4sL", data, offset)
        if name not in CACHE_EXTENSIONS:
            extensions.append(data[offset : offset + 8 + size])
        offset += 8 + size
    return version, entries, extensions


def snapshot(out: Path) -> dict[str, object]:
    """Every folder and file under ``out`` with its mode and content (objects decompressed, index stat data left out),
    and what ``git worktree list`` and ``git log --all`` show there."""
    found: dict[str, object] = {}
    for item in sorted(out.rglob("*")):
        relative = item.relative_to(out).as_posix()
        mode = oct(item.lstat().st_mode)
        if item.is_dir():
            found[relative + "/"] = mode
            continue
        data = item.read_bytes()
        if LOOSE_OBJECT.fullmatch(relative):
            data = zlib.decompress(data)
        if item.name == "index":
            found[relative] = (mode, _normalised_index(item))
            continue
        if relative == ".git/config":  # libgit2 writes core.bare first, git third: the same settings
            data = b"".join(sorted(data.splitlines(keepends=True)))
        if "/logs/" in f"/{relative}":
            data = REFLOG_TIME.sub(rb"\1 <date>", data)
        found[relative] = (mode, data.replace(str(out.resolve()).encode(), b"<out>"))
    for command in (("worktree", "list", "--porcelain"), ("log", "--all", "--format=%H %P %s%n%b", "--graph")):
        shown = subprocess.run(["git", *command], cwd=out, capture_output=True, text=True, check=True).stdout
        found["$ git " + " ".join(command)] = shown.replace(str(out.resolve()), "<out>")  # what a user's git shows
    return found


def listed_branches(out: Path, git_cli: Git) -> list[str]:
    """The branches of the linked worktrees ``git worktree list`` shows."""
    lines = git_cli(out, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("branch refs/heads/") for line in lines if line.startswith("branch ")][1:]


def prune_dry_run(out: Path) -> str:
    """What ``git worktree prune`` would remove and why (git reports it on stderr)."""
    result = subprocess.run(["git", "worktree", "prune", "-n", "-v"], cwd=out, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stderr.strip()


def record(out: Path) -> list[dict[str, object]]:
    """A session's life in a new folder, with a snapshot after each step."""
    snapshots = []
    with VersionRepository(out) as repo:
        first = repo.open_session("s1")
        snapshots.append(snapshot(out))
        first.commit_version("pkg/solution.py", "x = 1\n", "proposal: agent-1")
        first.commit_version("pkg/solution.py", "x = 2\n", "critique: agent-2")
        second = repo.open_session("s2")  # another worktree is registered now
        second.commit_version("solution.py", "y = 1\n", "proposal: agent-1")
        snapshots.append(snapshot(out))
        second.close()
        first.close()
        snapshots.append(snapshot(out))
        resumed = repo.open_session("s1")  # its branch exists: git checks it out in both runs
        resumed.commit_version("pkg/solution.py", "x = 3\n", "optimization: agent-1")
        resumed.close()
        snapshots.append(snapshot(out))
    return snapshots


def test_a_session_written_in_process_leaves_the_files_git_leaves(
    tmp_path: Path,
    empty_home: Path,
    git_cli: Git,
    monkeypatch: pytest.MonkeyPatch,
    git_processes: list[str],
    in_process_clock: None,
) -> None:
    with monkeypatch.context() as dated:  # a date in the environment: git's own commands do everything
        dated.setenv("GIT_AUTHOR_DATE", f"@{WHEN} +0000")
        dated.setenv("GIT_COMMITTER_DATE", f"@{WHEN} +0000")
        theirs = record(tmp_path / "by-git")
    assert git_processes[:2] == ["init", "mktree"] and git_processes.count("worktree") >= 6
    git_processes.clear()

    ours = record(tmp_path / "in-process")
    assert git_processes == ["worktree"]  # only the resumed branch's checkout

    for step, (mine, git_s) in enumerate(zip(ours, theirs, strict=True)):
        assert mine.keys() == git_s.keys(), f"step {step}"
        assert mine == git_s, f"step {step}"
    assert any(name.startswith(".git/hooks/") for name in ours[0]), "git's templates are copied"
    assert ".git/worktrees/s1/ORIG_HEAD" in ours[0] and ".git/worktrees/" not in ours[2]

    out = tmp_path / "in-process"
    assert git_cli(out, "fsck", "--strict", "--no-dangling") == ""
    assert git_cli(out, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git_cli(out, "status", "--porcelain", "--untracked-files=all") == ""
    assert git_cli(out, "show", "debate/s1:pkg/solution.py") == "x = 3\n"


def test_real_git_accepts_a_worktree_made_in_process(
    out_dir: Path, empty_home: Path, git_cli: Git, git_processes: list[str]
) -> None:
    with VersionRepository(out_dir) as repo:
        session = repo.open_session("s1")
        assert git_cli(session.path, "status", "--porcelain", "--untracked-files=all") == ""
        assert git_cli(session.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "debate/s1"
        assert f"{session.path}  " in git_cli(out_dir, "worktree", "list")
        session.commit_version("solution.py", "x = 1\n", "v1")
        git_cli(out_dir, "worktree", "remove", str(session.path))  # without --force: git finds it clean
        assert not session.path.exists()
        other = repo.open_session("s2")
        shutil.rmtree(other.path)
        git_cli(out_dir, "worktree", "prune")
        assert not (out_dir / ".git" / "worktrees").exists()
        assert git_cli(out_dir, "fsck", "--strict", "--no-dangling") == ""
    assert git_processes == []


def test_a_fresh_folder_session_starts_no_git_process(
    out_dir: Path, empty_home: Path, git_cli: Git, git_processes: list[str]
) -> None:
    with VersionRepository(out_dir) as repo:
        session = repo.open_session("s1")
        for n in range(5):
            session.diff_from_previous("solution.py", f"x = {n}\n")
            session.commit_version("solution.py", f"x = {n}\n", f"v{n}", {"Agent": "agent-1"})
        session.commit_version("report.md", "# Report\n", "report")
        session.close()
    assert git_processes == []
    assert git_cli(out_dir, "rev-list", "--count", "debate/s1").strip() == "7"
    assert not (out_dir / ".worktrees" / "s1").exists()
    assert sorted(path.name for path in out_dir.iterdir()) == [".git", ".worktrees"]


def test_a_worktree_whose_folder_vanished_is_pruned_in_process(
    repo: VersionRepository, out_dir: Path, git_cli: Git, git_processes: list[str]
) -> None:
    kept = repo.open_session("kept")
    gone = repo.open_session("gone")
    gone.commit_version("a.py", "a = 1\n", "v1")
    gone.close(remove_worktree=False)
    shutil.rmtree(gone.path)
    assert prune_dry_run(out_dir) == f"Removing worktrees/gone: {GONE}"
    git_processes.clear()
    again = repo.open_session("gone")  # stale entry forgotten in process; git checks the branch out again
    assert git_processes == ["worktree"]
    assert (again.path / "a.py").read_text() == "a = 1\n"
    assert sorted(listed_branches(out_dir, git_cli)) == ["debate/gone", "debate/kept"]
    again.close()
    kept.close()


@pytest.mark.parametrize(
    "damage",
    ["no gitdir file", "empty gitdir file", "a file among the admin folders", "two entries for one folder"],
)
def test_entries_only_gits_prune_can_judge_go_to_git(
    damage: str, repo: VersionRepository, out_dir: Path, git_cli: Git, git_processes: list[str]
) -> None:
    first = repo.open_session("s1")
    admin = out_dir / ".git" / "worktrees"
    if damage == "no gitdir file":
        (admin / "junk").mkdir()
    elif damage == "empty gitdir file":
        (admin / "junk").mkdir()
        (admin / "junk" / "gitdir").write_text("\n")
    elif damage == "a file among the admin folders":
        (admin / "junk").write_text("x")
    else:
        shutil.copytree(admin / "s1", admin / "t1")
    assert _linked_worktrees.registered(open_repository(out_dir), out_dir / ".git") is None
    assert prune_dry_run(out_dir).startswith("Removing worktrees/")
    git_processes.clear()
    second = repo.open_session("s2")
    assert git_processes == ["worktree"]  # git's prune; the new worktree itself is written in process
    assert not (admin / "junk").exists() and not (admin / "t1").exists()
    assert set(listed_branches(out_dir, git_cli)) == {"debate/s1", "debate/s2"}
    second.close()
    first.close()


def test_a_locked_worktree_is_left_to_git(
    repo: VersionRepository, out_dir: Path, git_cli: Git, git_processes: list[str]
) -> None:
    session = repo.open_session("s1")
    git_cli(out_dir, "worktree", "lock", str(session.path))
    git_processes.clear()
    with pytest.raises(VersionControlError, match="locked"):
        session.close()
    assert git_processes == ["worktree"]
    assert session.path.is_dir()
    git_cli(out_dir, "worktree", "unlock", str(session.path))
    (session.path / ".git").write_text("gitdir: /elsewhere\n")  # a broken link: git's business
    with pytest.raises(DirectWriteRefused, match="do not name each other"):
        _linked_worktrees.remove(open_repository(out_dir), out_dir / ".git", session.path)
    assert session.path.is_dir() and (out_dir / ".git" / "worktrees" / "s1").is_dir()


def test_a_repository_with_files_at_head_checks_them_out_through_git(
    out_dir: Path, empty_home: Path, git_cli: Git, git_processes: list[str]
) -> None:
    with VersionRepository(out_dir) as repo:
        first = repo.open_session("s1")
        first.commit_version("a.py", "a = 1\n", "v1")
        first.close()
        git_cli(out_dir, "merge", "--quiet", "--ff-only", "debate/s1")
        git_processes.clear()
        second = repo.open_session("s2")
        assert git_processes == ["worktree"]
        assert (second.path / "a.py").read_text() == "a = 1\n"
        second.close()


def test_git_init_runs_where_its_result_could_differ(
    tmp_path: Path, empty_home: Path, monkeypatch: pytest.MonkeyPatch, git_processes: list[str], git_cli: Git
) -> None:
    assert init_blocker(git_config(None)) is None
    (empty_home / ".gitconfig").write_text(f"[init]\n\ttemplateDir = {tmp_path}\n")
    assert init_blocker(git_config(None)) == "init.templatedir is set"
    (empty_home / ".gitconfig").write_text("[core]\n\tlogAllRefUpdates = always\n")
    assert init_blocker(git_config(None)) == "core.logallrefupdates is set"
    (empty_home / ".gitconfig").write_text("[init]\n\tdefaultBranch = trunk\n")  # --initial-branch wins
    assert init_blocker(git_config(None)) is None
    with monkeypatch.context() as patched:
        patched.setenv("GIT_DEFAULT_HASH", "sha256")
        assert init_blocker({}) == "GIT_DEFAULT_HASH is set"

    template = tmp_path / "template"
    (template / "hooks").mkdir(parents=True)
    (template / "config").write_text("[core]\n\tbare = true\n")  # git reads a template's config: git decides
    for module in (_config, _new_repository):
        monkeypatch.setattr(module, "template_dir", lambda: template)
    with VersionRepository(tmp_path / "out"):
        pass
    assert git_processes[0] == "init"
    assert (tmp_path / "out" / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert not list((tmp_path / "out").glob(".git.init-*"))


def test_the_config_written_holds_what_gits_holds(tmp_path: Path, empty_home: Path, git_cli: Git) -> None:
    git_cli(tmp_path, "init", "--quiet", "--initial-branch=main", "by-git")
    with VersionRepository(tmp_path / "in-process"):
        pass
    theirs = git_cli(tmp_path / "by-git", "config", "--local", "--list").splitlines()
    ours = git_cli(tmp_path / "in-process", "config", "--local", "--list").splitlines()
    assert sorted(ours) == sorted(theirs)  # libgit2 writes core.bare first; git reads them alike


RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import git.cmd
    from debatecode.vcs import VersionRepository

    base, worker, workers, rounds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    started = []
    real_popen = git.cmd.safer_popen
    git.cmd.safer_popen = lambda args, *rest, **kw: started.append(args[1]) or real_popen(args, *rest, **kw)
    for k in range(rounds):
        (base / f"ready-{k}-{worker}").touch()
        deadline = time.monotonic() + 60
        while len(list(base.glob(f"ready-{k}-*"))) < workers:
            if time.monotonic() > deadline:
                sys.exit(f"round {k}: another worker did not come")
            time.sleep(0.0005)
        with VersionRepository(base / f"out-{k}") as repo:
            session = repo.open_session(f"s{worker}")
            session.commit_version("solution.py", f"worker {worker}\\n", f"v{worker}")
            session.close()
    print(len(started), flush=True)
    """
)


@pytest.mark.slow
def test_processes_opening_sessions_in_one_new_folder_at_once(tmp_path: Path, empty_home: Path, git_cli: Git) -> None:
    workers, rounds = 3, 8
    children = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(tmp_path), str(worker), str(workers), str(rounds)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(workers)
    ]
    try:
        results = [child.communicate(timeout=300) for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    for child, (_counts, stderr) in zip(children, results, strict=True):
        assert child.returncode == 0, stderr
    for k in range(rounds):
        out = tmp_path / f"out-{k}"
        assert git_cli(out, "fsck", "--strict", "--no-dangling") == ""
        assert git_cli(out, "rev-list", "--count", "main").strip() == "1"
        for worker in range(workers):
            assert git_cli(out, "show", f"debate/s{worker}:solution.py") == f"worker {worker}\n"
            assert git_cli(out, "rev-list", "--count", f"debate/s{worker}").strip() == "2"
        assert git_cli(out, "worktree", "list", "--porcelain").count("worktree ") == 1
        assert git_cli(out, "status", "--porcelain", "--untracked-files=all") == ""
        assert (out / ".git" / "info" / "exclude").read_text().splitlines().count(".worktrees/") == 1
        assert sorted(path.name for path in out.iterdir()) == [".git", ".worktrees"]
        assert list((out / ".git").glob("*.tmp")) == []
