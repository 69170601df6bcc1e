"""Branch refs and reflogs written in process, with git's own lock files so git processes and we never interleave.

``update_ref`` does what ``git update-ref <ref> <new> <old>`` does in the
files backend: take ``<ref>.lock`` exclusively, check the ref still holds
``old``, write ``new``, rename the lock into place, and append the reflog
lines git would append (to the ref's log and to the log of a ``HEAD`` that
points at it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from debatecode.vcs._git import DirectWriteRefused

__all__ = ["ZERO_SHA", "LockTaken", "RefMoved", "lock_file", "read_ref", "reflog_line", "symbolic_head", "update_ref"]

ZERO_SHA = "0" * 40


class LockTaken(DirectWriteRefused):
    """Another process holds git's lock file (``<file>.lock``)."""


class RefMoved(DirectWriteRefused):
    """The ref no longer holds the value the caller based its change on."""


@contextmanager
def lock_file(path: Path) -> Iterator[int]:
    """Hold ``<path>.lock`` (created exclusively) and yield its descriptor; it is removed unless committed.

    Commit by writing to the descriptor and calling ``commit_lock(path)`` inside the block.

    Raises:
        LockTaken: the lock file exists.
    """
    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError as exc:
        raise LockTaken(f"{lock} exists: another git process is running, or one crashed and left it") from exc
    try:
        yield fd
    finally:
        os.close(fd)
        if lock.exists():
            lock.unlink()


def commit_lock(path: Path) -> None:
    """Move ``<path>.lock`` over ``path`` (the end of a ``lock_file`` block's write)."""
    os.replace(path.with_name(path.name + ".lock"), path)


def symbolic_head(git_dir: Path) -> str | None:
    """The ref a worktree's ``HEAD`` points at (``refs/heads/...``), or None when it is detached."""
    text = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    return text.removeprefix("ref:").strip() if text.startswith("ref:") else None


def read_ref(common_dir: Path, ref: str) -> str | None:
    """The sha ``ref`` (a full name, not symbolic) holds: its loose file, else ``packed-refs``; None when missing."""
    loose = common_dir / ref
    if loose.is_file():
        return loose.read_text(encoding="ascii").strip()
    packed = common_dir / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8").splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and not line.startswith(("#", "^")):
                return sha
    return None


def reflog_line(old: str | None, new: str, ident: str, message: str) -> str:
    """One reflog line as git writes it (no tab when there is no message)."""
    line = f"{old or ZERO_SHA} {new} {ident}"
    return f"{line}\t{message}\n" if message else line + "\n"


def _append(log: Path, line: str, create: bool) -> None:
    if not create and not log.exists():
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(line)


def update_ref(
    common_dir: Path,
    ref: str,
    new: str,
    old: str | None,
    *,
    reflog: str,
    head_logs: tuple[Path, ...] = (),
    create_logs: bool = True,
) -> None:
    """Point ``ref`` at ``new`` if it still holds ``old`` (None: it must not exist), and log it.

    ``reflog`` is the line to append, to ``logs/<ref>`` and to each of
    ``head_logs`` (the ``logs/HEAD`` of worktrees whose ``HEAD`` is ``ref``).
    ``create_logs`` false appends only to logs that exist
    (``core.logAllRefUpdates = false``).

    Raises:
        LockTaken: another process is updating the ref.
        RefMoved: the ref does not hold ``old``.
        OSError: the file system fails.
    """
    path = common_dir / ref
    path.parent.mkdir(parents=True, exist_ok=True)
    with lock_file(path) as fd:
        current = read_ref(common_dir, ref)
        if current != old:
            raise RefMoved(f"{ref} is at {current}, expected {old}")
        os.write(fd, f"{new}\n".encode("ascii"))
        commit_lock(path)
    for log in (common_dir / "logs" / ref, *head_logs):
        _append(log, reflog, create_logs)
