"""Session worktrees added, listed, pruned and removed in process through libgit2, or left to ``git worktree``.

A linked worktree is a folder whose ``.git`` file names its admin folder
``<common>/worktrees/<name>``, whose ``gitdir`` file names the folder's ``.git``
back. Here, all under ``worktrees_locked`` so that two debatecode processes
never see each other's half-made or half-removed entry:

- ``add_new_branch`` does ``git worktree add -b <branch> <path> HEAD`` when
  ``HEAD``'s commit has the empty tree (a new output folder's first commit):
  the branch with git's reflog line, then libgit2's ``git_worktree_add``;
- ``registered`` lists what ``git worktree list`` shows, once the entries
  whose folder is gone are pruned by libgit2; an entry libgit2 does not list
  or two entries for one folder make it None, and git's prune decides;
- ``remove`` does ``git worktree remove --force`` for a worktree that is not
  locked and whose links are intact: the folder, then libgit2's prune of the
  admin folder (and ``worktrees/`` once empty, as git);
- ``link_intact`` tells whether ``git worktree repair`` would change anything.

Anything else raises ``DirectWriteRefused`` before it writes, and the caller
runs git's command.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pygit2

from debatecode.vcs import _commits
from debatecode.vcs._git import DirectWriteRefused

__all__ = [
    "add_new_branch",
    "common_dir_of",
    "link_intact",
    "parse_worktree_list",
    "registered",
    "remove",
    "worktrees_locked",
]

_ADMIN = "worktrees"
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@contextlib.contextmanager
def worktrees_locked(common_dir: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the repository's git folder while the block adds, prunes or removes worktrees.

    Only debatecode processes take it; it leaves no file behind.
    """
    fd = os.open(common_dir, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def common_dir_of(git_dir: Path) -> Path:
    """The repository's git folder (objects, refs) for a work tree's git folder: itself, or what ``commondir`` names."""
    try:
        named = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return git_dir
    return Path(os.path.normpath(git_dir / named))


def parse_worktree_list(output: str) -> dict[Path, str | None]:
    """Worktree folder -> checked-out branch (None when detached) from ``git worktree list --porcelain -z``."""
    worktrees: dict[Path, str | None] = {}
    current: Path | None = None
    for entry in output.split("\0"):
        if entry.startswith("worktree "):
            current = Path(entry.removeprefix("worktree ")).resolve()
            worktrees[current] = None
        elif entry.startswith("branch ") and current is not None:
            worktrees[current] = entry.removeprefix("branch ").removeprefix("refs/heads/")
    return worktrees


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return None


def _drop_admin_folder_if_empty(common_dir: Path) -> None:
    with contextlib.suppress(OSError):  # not empty, or gone: git ignores it too
        (common_dir / _ADMIN).rmdir()


def registered(repo: pygit2.Repository, common_dir: Path) -> dict[Path, str | None] | None:
    """Worktree folder -> checked-out branch (None when detached), once the entries whose folder is gone are pruned.

    None (nothing done) when an entry needs another of git's rules (libgit2 does not list it, or two entries
    name one folder): git's prune must run.

    Raises:
        pygit2.GitError, OSError: libgit2 or the file system fails.
    """
    try:
        names = sorted(os.listdir(common_dir / _ADMIN))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    if names != sorted(repo.list_worktrees()):
        return None
    worktrees: dict[Path, str | None] = {}
    for name in names:
        admin = common_dir / _ADMIN / name
        worktree = repo.lookup_worktree(name)
        if worktree.is_prunable:  # not locked, and its folder is gone
            worktree.prune()
            continue
        path = Path(worktree.path).resolve()
        if path in worktrees or path == common_dir.parent.resolve():
            return None  # two entries for one folder: git's prune decides which stays
        head = _read_text(admin / "HEAD") or ""
        worktrees[path] = (
            head.removeprefix("ref:").strip().removeprefix("refs/heads/") if head.startswith("ref:") else None
        )
    if len(worktrees) < len(names):
        _drop_admin_folder_if_empty(common_dir)
    return worktrees


def link_intact(common_dir: Path, path: Path) -> bool:
    """Whether ``path``'s ``.git`` file and its admin folder's ``gitdir`` name each other (``git worktree repair`` would change nothing)."""
    text = _read_text(path / ".git")
    if text is None or not text.startswith("gitdir: "):
        return False
    admin = Path(text.removeprefix("gitdir: ").rstrip("\n"))
    if not admin.is_absolute() or admin.resolve() != (common_dir / _ADMIN / admin.name).resolve():
        return False
    if not (admin / "HEAD").is_file() or not (admin / "commondir").is_file():
        return False
    back = _read_text(admin / "gitdir")
    return back is not None and back.rstrip() == str((path / ".git").resolve())


def add_new_branch(repo: pygit2.Repository, common_dir: Path, path: Path, branch: str) -> None:
    """``git worktree add -b <branch> <path> HEAD`` for a ``HEAD`` whose commit has the empty tree.

    ``repo``: the repository's own (not a linked worktree's) ``open_repository``. The caller holds
    ``worktrees_locked``, has checked ``_config.add_blocker`` and that ``path`` does not exist and is not
    registered. The admin folder is named after ``path``.

    Raises:
        DirectWriteRefused: git must do it: ``HEAD`` is detached, unborn or not empty, the branch or admin name
            is taken (if the branch was already made here, it stays, and git's ``worktree add <path> <branch>``
            finishes).
        pygit2.GitError, OSError: libgit2 or the file system fails.
    """
    if repo.head_is_detached or repo.head_is_unborn:
        raise DirectWriteRefused("HEAD is detached or unborn")
    start = repo.head.peel(pygit2.Commit)
    if str(start.tree_id) != _EMPTY_TREE:
        raise DirectWriteRefused("HEAD's commit has files: git checks them out")
    admin = common_dir / _ADMIN / path.name
    if os.path.lexists(admin):
        raise DirectWriteRefused(f"{admin} exists")
    try:  # git branch <branch> HEAD
        ref = repo.create_reference_direct(f"refs/heads/{branch}", start.id, False, message="branch: Created from HEAD")
    except (pygit2.AlreadyExistsError, pygit2.InvalidSpecError, ValueError, OSError) as exc:
        raise DirectWriteRefused(f"refs/heads/{branch} cannot be created: {exc}") from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    who = _commits.ident_text(_commits.signature())
    try:
        repo.add_worktree(path.name, str(path), ref)
        _as_git_adds_it(admin, path, common_dir, str(start.id), who)
    except BaseException:  # as git's remove_junk: no half-made worktree stays (the branch does)
        shutil.rmtree(admin, ignore_errors=True)
        shutil.rmtree(path, ignore_errors=True)
        _drop_admin_folder_if_empty(common_dir)
        raise


def _as_git_adds_it(admin: Path, path: Path, common_dir: Path, start: str, who: str) -> None:
    """Make the files libgit2's ``git_worktree_add`` writes otherwise what ``git worktree add`` writes.

    git's links: a relative ``commondir`` (libgit2 writes it absolute, which a moved output folder breaks) and a
    ``.git`` file without a trailing slash. What git's ``symbolic-ref HEAD`` and ``reset --hard`` leave in the new
    admin folder: ``ORIG_HEAD``, and the two first lines of the worktree's ``HEAD`` reflog (libgit2 writes none).
    """
    (admin / "commondir").write_text("../..\n", encoding="utf-8")
    (path / ".git").write_text(f"gitdir: {common_dir.resolve() / _ADMIN / admin.name}\n", encoding="utf-8")
    (admin / "ORIG_HEAD").write_text(f"{start}\n", encoding="ascii")
    (admin / "logs").mkdir(0o777, exist_ok=True)
    lines = f"{'0' * 40} {start} {who}\n{start} {start} {who}\treset: moving to HEAD\n"
    with (admin / "logs" / "HEAD").open("x", encoding="utf-8") as log:  # a new worktree has no HEAD reflog yet
        log.write(lines)


def remove(repo: pygit2.Repository, common_dir: Path, path: Path) -> None:
    """``git worktree remove --force <path>``: delete the folder, then its admin folder (and ``worktrees/`` once empty).

    The caller holds ``worktrees_locked``.

    Raises:
        DirectWriteRefused: git must do it: the worktree is locked, or its links are not intact.
        pygit2.GitError, OSError: libgit2 or the file system fails.
    """
    if not link_intact(common_dir, path):
        raise DirectWriteRefused(f"{path} and its admin folder do not name each other")
    admin = Path((path / ".git").read_text(encoding="utf-8").removeprefix("gitdir: ").rstrip("\n"))
    if (admin / "locked").exists():
        raise DirectWriteRefused(f"{path} is locked")
    try:
        shutil.rmtree(path)
    finally:  # as git: once the folder is (partly) gone there is no going back
        try:
            repo.lookup_worktree(admin.name).prune(True)
        except (pygit2.GitError, KeyError):
            shutil.rmtree(admin, ignore_errors=True)
        _drop_admin_folder_if_empty(common_dir)
