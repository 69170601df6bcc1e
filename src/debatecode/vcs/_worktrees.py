"""Linked worktrees read, added, pruned and removed in process, as git 2.39's ``git worktree`` does it, or a refusal.

A linked worktree is a folder whose ``.git`` file names its admin folder
``<common>/worktrees/<name>``, whose ``gitdir`` file names the folder's ``.git``
back. Here:

- ``registrations`` reads what ``git worktree list`` reads, and the reason
  ``git worktree prune`` would forget each entry; ``prune_stale`` forgets the
  plain case (a folder that is gone, not ``locked``) and leaves every other
  reason (no or bad ``gitdir``, a file among the admin folders, two entries for
  one folder) to git's prune;
- ``add_new_branch`` does ``git worktree add -b <branch> <path> HEAD`` when
  ``HEAD``'s commit has the empty tree (a new output folder's first commit):
  the branch and its reflog line, the admin folder (``HEAD``, ``commondir``,
  ``gitdir``, ``ORIG_HEAD``, ``logs/HEAD``, the index ``reset --hard`` leaves)
  and the ``.git`` file; the admin folder is filled under a temporary name and
  renamed into place, ``locked`` until then, so no prune sees it incomplete;
- ``remove`` does ``git worktree remove --force`` for a worktree that is not
  locked and whose links are intact;
- ``link_intact`` tells whether ``git worktree repair`` would change anything.

Anything else raises ``DirectWriteRefused`` before it writes, and the caller
runs git's command.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

from debatecode.vcs._direct import identity, in_process_blocker
from debatecode.vcs._git import DirectWriteRefused
from debatecode.vcs._objects import EMPTY_TREE, ObjectStore
from debatecode.vcs._refs import ZERO_SHA, read_ref, reflog_line, symbolic_head, update_ref

__all__ = [
    "GONE",
    "Registration",
    "add_blocker",
    "add_new_branch",
    "link_intact",
    "listed",
    "prune_stale",
    "registrations",
    "remove",
]

GONE = "gitdir file points to non-existent location"  # git's own reason
_ADMIN = "worktrees"
_EMPTY_INDEX_BODY = (
    b"DIRC" + struct.pack(">LL", 2, 0) + b"TREE" + struct.pack(">L", 25) + b"\x000 0\n" + bytes.fromhex(EMPTY_TREE)
)
EMPTY_TREE_INDEX = _EMPTY_INDEX_BODY + hashlib.sha1(_EMPTY_INDEX_BODY, usedforsecurity=False).digest()
# Settings that change what ``git branch`` or ``git reset --hard`` write in a new worktree.
_ADD_KEYS = ("core.worktree", "core.sparsecheckout", "core.untrackedcache", "branch.autosetuprebase")


@dataclass(frozen=True, slots=True)
class Registration:
    """One entry of ``<common>/worktrees``: what ``git worktree list`` shows of it and why ``prune`` would drop it."""

    name: str
    gitdir: str | None  # the ``gitdir`` file's path (trailing newlines cut), None when unreadable or empty
    branch: str | None
    locked: bool
    prune: str | None  # git's reason to forget the entry, or None

    @property
    def path(self) -> Path | None:
        """The worktree folder, as ``git worktree list`` gives it (resolved), or None."""
        if self.gitdir is None:
            return None
        return Path(self.gitdir.rstrip().removesuffix("/.git")).resolve()


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return None


def _registration(admin: Path) -> Registration:
    name = admin.name
    if not admin.is_dir():
        return Registration(name, None, None, False, "not a valid directory")
    head = _read_text(admin / "HEAD") or ""
    branch = head.removeprefix("ref:").strip().removeprefix("refs/heads/") if head.startswith("ref:") else None
    text = _read_text(admin / "gitdir")
    gitdir = text.rstrip("\n\r") if text else None
    locked = (admin / "locked").exists()
    if locked:
        reason = None
    elif text is None:
        reason = "gitdir file does not exist"
    elif not gitdir:
        reason = "invalid gitdir file"
    elif not os.path.lexists(gitdir):
        reason = GONE
    else:
        reason = None
    return Registration(name, gitdir or None, branch, locked, reason)


def registrations(common_dir: Path) -> list[Registration]:
    """Every entry of ``<common>/worktrees``, sorted by name (none when the folder is missing)."""
    admin = common_dir / _ADMIN
    try:
        names = sorted(os.listdir(admin))
    except (FileNotFoundError, NotADirectoryError):
        return []
    entries = [_registration(admin / name) for name in names]
    # an entry that looked broken because another process removed it while it was read is not there
    return [entry for entry in entries if entry.prune in (None, GONE) or os.path.lexists(admin / entry.name)]


def _only_plainly_stale(common_dir: Path, entries: list[Registration]) -> bool:
    """Whether git's prune would drop exactly the entries whose folder is gone (no other rule of it applies)."""
    kept = {common_dir.resolve()}  # the main worktree's entry: a linked one naming it is a duplicate
    for entry in entries:
        if entry.locked:
            continue
        if entry.prune not in (None, GONE) or entry.gitdir is None:
            return False
        if not entry.gitdir.startswith("/") or entry.gitdir != entry.gitdir.rstrip():
            return False  # git would read this path differently in different places
        if entry.prune is None:
            resolved = Path(entry.gitdir).resolve()
            if resolved in kept:  # two entries for one folder: git's prune_dups decides which stays
                return False
            kept.add(resolved)
    return True


def _remove_tree(path: Path) -> None:
    """Delete a folder; one that another process deleted meanwhile is fine."""

    def ignore_missing(function: object, name: str, info: tuple[type[BaseException], BaseException, object]) -> None:
        if not isinstance(info[1], FileNotFoundError):
            raise info[1]

    shutil.rmtree(path, onerror=ignore_missing)


def _discard_admin(common_dir: Path, admin: Path) -> None:
    """Delete an admin folder as one step for anyone reading ``worktrees/``: moved out of it first, then deleted.

    (git deletes it in place; a prune reading it half-deleted would see a broken entry.)
    """
    doomed = common_dir / f"worktree-{secrets.token_hex(6)}.tmp"
    try:
        admin.rename(doomed)
    except FileNotFoundError:
        return  # another process pruned it meanwhile
    _remove_tree(doomed)


def _drop_admin_folder_if_empty(common_dir: Path) -> None:
    with contextlib.suppress(OSError):  # not empty, or gone: git ignores it too
        (common_dir / _ADMIN).rmdir()


def prune_stale(common_dir: Path) -> list[Registration] | None:
    """Forget the worktrees whose folder is gone, as ``git worktree prune`` would; return the entries left.

    None (nothing done) when an entry needs another of git's rules: git's prune must run.

    Raises:
        OSError: the file system fails.
    """
    entries = registrations(common_dir)
    if not _only_plainly_stale(common_dir, entries):
        return None
    stale = [entry for entry in entries if entry.prune == GONE]
    for entry in stale:
        _discard_admin(common_dir, common_dir / _ADMIN / entry.name)
    if stale:
        _drop_admin_folder_if_empty(common_dir)
    return [entry for entry in entries if entry.prune != GONE]


def listed(entries: list[Registration]) -> dict[Path, str | None]:
    """Worktree folder -> checked-out branch (None when detached) of ``entries``, as ``git worktree list`` shows them."""
    return {path: entry.branch for entry in entries if (path := entry.path) is not None}


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


def add_blocker(config: dict[str, str]) -> str | None:
    """Why ``git worktree add`` must run as a process for this repository (``config``: git's configuration), or None."""
    blocker = in_process_blocker(config)
    if blocker is not None:
        return blocker
    logs = config.get("core.logallrefupdates", "true").strip().lower()
    if logs not in ("true", "yes", "on", "1", ""):
        return f"core.logAllRefUpdates is {logs!r}"
    if config.get("branch.autosetupmerge", "true").strip().lower() not in ("true", "false", "yes", "no", "on", "off"):
        return "branch.autoSetupMerge is set"
    for key in config:
        if key.startswith("index.") or key in _ADD_KEYS:
            return f"{key} is set"
    return None


def _branch_free(common_dir: Path, ref: str) -> bool:
    """Whether ``ref`` can be created: no such ref, and no ref that is a folder of it or inside it."""
    if read_ref(common_dir, ref) is not None or os.path.lexists(common_dir / ref):
        return False
    parent = (common_dir / ref).parent
    while parent != common_dir:
        if os.path.lexists(parent) and not parent.is_dir():
            return False
        parent = parent.parent
    packed = _read_text(common_dir / "packed-refs") or ""
    for line in packed.splitlines():
        name = line.partition(" ")[2]
        if name and not line.startswith(("#", "^")) and (ref.startswith(name + "/") or name.startswith(ref + "/")):
            return False
    return True


def add_new_branch(common_dir: Path, path: Path, branch: str) -> None:
    """``git worktree add -b <branch> <path> HEAD`` for a ``HEAD`` whose commit has the empty tree.

    The caller has checked ``add_blocker`` and that ``path`` does not exist and
    is not registered. The admin folder is named after ``path``.

    Raises:
        DirectWriteRefused: git must do it: ``HEAD`` is detached, unborn or not
            empty, the branch or admin name is taken (if the branch was already
            made here, it stays, and git's ``worktree add <path> <branch>`` finishes).
        OSError: the file system fails.
    """
    head_ref = symbolic_head(common_dir)
    start = read_ref(common_dir, head_ref) if head_ref is not None and head_ref.startswith("refs/heads/") else None
    if start is None or len(start) != 40:
        raise DirectWriteRefused("HEAD is detached, unborn or not a plain branch")
    if ObjectStore(common_dir / "objects").read(start).partition(b"\n")[0] != b"tree " + EMPTY_TREE.encode():
        raise DirectWriteRefused("HEAD's commit has files: git checks them out")
    ref = f"refs/heads/{branch}"
    admin = common_dir / _ADMIN / path.name
    if not _branch_free(common_dir, ref) or os.path.lexists(admin):
        raise DirectWriteRefused(f"{ref} or {admin} exists")
    who = identity()
    # git branch <branch> HEAD
    update_ref(common_dir, ref, start, None, reflog=reflog_line(None, start, who, "branch: Created from HEAD"))
    # add_worktree(): the admin folder is filled under a temporary name (``locked`` first, as git) and
    # renamed into place, so that no prune, ours or git's, ever sees it without its gitdir file
    building = common_dir / f"worktree-{secrets.token_hex(6)}.tmp"
    building.mkdir(0o777)
    made = [building]
    try:
        _fill_admin(building, path, ref, start, who)
        path.mkdir(0o777, parents=True)
        made.append(path)
        (path / ".git").write_text(f"gitdir: {common_dir.resolve() / _ADMIN / admin.name}\n", encoding="utf-8")
        _move_into_place(building, admin)
        made[0] = admin
        (admin / "locked").unlink()
    except BaseException:  # as git's remove_junk: no half-made worktree stays (the branch does)
        _discard_admin(common_dir, made[0])
        for folder in made[1:]:
            _remove_tree(folder)
        raise


def _fill_admin(admin: Path, path: Path, ref: str, start: str, who: str) -> None:
    """The admin folder's files, as ``worktree add``, ``symbolic-ref`` and ``reset --hard`` leave them."""
    (admin / "locked").write_text("initializing\n", encoding="utf-8")
    (admin / "gitdir").write_text(f"{path.resolve() / '.git'}\n", encoding="utf-8")
    (admin / "commondir").write_text("../..\n", encoding="utf-8")
    # symbolic-ref HEAD <ref> (its reflog line has no message), then reset --hard on the empty tree
    (admin / "HEAD").write_text(f"ref: {ref}\n", encoding="utf-8")
    (admin / "logs").mkdir(0o777)
    (admin / "ORIG_HEAD").write_text(f"{start}\n", encoding="ascii")
    lines = reflog_line(ZERO_SHA, start, who, "") + reflog_line(start, start, who, "reset: moving to HEAD")
    (admin / "logs" / "HEAD").write_text(lines, encoding="utf-8")
    (admin / "index").write_bytes(EMPTY_TREE_INDEX)


def _move_into_place(building: Path, admin: Path) -> None:
    """Rename the filled admin folder to ``worktrees/<name>``.

    Raises:
        DirectWriteRefused: the name was taken meanwhile.
    """
    for _ in range(3):
        admin.parent.mkdir(0o777, exist_ok=True)
        try:
            building.rename(admin)
            return
        except FileNotFoundError:
            continue  # another process dropped the empty worktrees/ folder meanwhile
        except OSError as exc:
            raise DirectWriteRefused(f"{admin} was taken meanwhile") from exc
    raise DirectWriteRefused(f"{admin.parent} keeps disappearing")


def remove(common_dir: Path, path: Path) -> None:
    """``git worktree remove --force <path>``: delete the folder, then its admin folder (and ``worktrees/`` once empty).

    Raises:
        DirectWriteRefused: git must do it: the worktree is locked, or its links are not intact.
        OSError: the file system fails.
    """
    if not link_intact(common_dir, path):
        raise DirectWriteRefused(f"{path} and its admin folder do not name each other")
    text = (path / ".git").read_text(encoding="utf-8")
    admin = Path(text.removeprefix("gitdir: ").rstrip("\n"))
    if (admin / "locked").exists():
        raise DirectWriteRefused(f"{path} is locked")
    try:
        _remove_tree(path)
    finally:  # as git: once the folder is (partly) gone there is no going back
        _discard_admin(common_dir, admin)
        _drop_admin_folder_if_empty(common_dir)
