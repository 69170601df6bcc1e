"""Reading a session's history back: file history, blame, file contents, diffs and exports.

These read committed objects only (never a worktree's files), so they work on
a session whose worktree was removed after it completed. ``VersionRepository``
and ``SessionWorktree`` expose them as methods.
"""

from __future__ import annotations

import hashlib
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from debatecode.errors import VersionControlError
from debatecode.vcs._git import LOG_FORMAT, CommitInfo, git, git_errors, parse_log, unified_diff

__all__ = ["BlameLine", "blame", "diff_files", "export_tree", "file_history", "find_file", "resolve", "show_file"]

_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class BlameLine:
    """One line of a file and the commit that last changed it."""

    line_no: int
    """1-based line number in the blamed revision."""
    content: str
    commit: CommitInfo

    @property
    def agent(self) -> str:
        """The ``Agent`` trailer of the commit (empty for commits made outside a debate)."""
        return self.commit.trailers.get("Agent", "")


def _checked(relpath: str, where: Path) -> str:
    pure = PurePosixPath(relpath.replace("\\", "/"))
    if not relpath or pure.is_absolute() or ".." in pure.parts or ".git" in pure.parts or not pure.parts:
        raise VersionControlError(f"{relpath!r} is not a file path inside the repository at {where}")
    return pure.as_posix()


def resolve(repo: git.Repo, where: Path, ref: str) -> str:
    """The full sha of the commit ``ref`` names.

    Raises:
        VersionControlError: ``ref`` names no commit.
    """
    with git_errors(where, f"find commit {ref!r}"):
        return str(repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")).strip()


def file_history(repo: git.Repo, where: Path, ref: str, relpath: str) -> list[CommitInfo]:
    """The commits reachable from ``ref`` that changed ``relpath`` (following renames), newest first.

    Raises:
        VersionControlError: the path is not inside the repository, ``ref`` does not exist, or git fails.
    """
    rel = _checked(relpath, where)
    with git_errors(where, f"read the history of {rel} on {ref}"):
        output = repo.git.log("--follow", f"--format={LOG_FORMAT}", ref, "--", rel, strip_newline_in_stdout=False)
    return parse_log(output)


def show_file(repo: git.Repo, where: Path, ref: str, relpath: str) -> str:
    """The content of ``relpath`` in commit ``ref`` (decoded as UTF-8, bad bytes replaced).

    Raises:
        VersionControlError: the file is not in that commit, ``ref`` does not exist, or git fails.
    """
    rel = _checked(relpath, where)
    sha = resolve(repo, where, ref)
    with git_errors(where, f"read {rel} at {ref}"):
        try:
            blob = repo.commit(sha).tree / rel
        except KeyError:
            raise VersionControlError(f"{rel} is not in commit {ref} of {where}") from None
        if blob.type != "blob":
            raise VersionControlError(f"{rel} at {ref} in {where} is a {blob.type}, not a file")
        data: bytes = blob.data_stream.read()
    return data.decode("utf-8", errors="replace")


def diff_files(repo: git.Repo, where: Path, old: tuple[str, str] | None, new: tuple[str, str]) -> str:
    """Unified diff from file ``old = (ref, relpath)`` to ``new = (ref, relpath)``; ``old=None`` is ``/dev/null``.

    The two may be different files (two agents' candidates): the headers name
    the new file's path, like ``diff_from_previous``, so ``git apply`` takes it.

    Raises:
        VersionControlError: a file or commit does not exist, or git fails.
    """
    new_ref, new_path = new
    after = show_file(repo, where, new_ref, new_path)
    before = show_file(repo, where, old[0], old[1]) if old is not None else None
    return unified_diff(before, after, _checked(new_path, where))


def blame(repo: git.Repo, where: Path, ref: str, relpath: str) -> list[BlameLine]:
    """Each line of ``relpath`` at ``ref`` with the commit that last changed it.

    Raises:
        VersionControlError: the file is not in that commit, ``ref`` does not exist, or git fails.
    """
    rel = _checked(relpath, where)
    resolve(repo, where, ref)
    with git_errors(where, f"blame {rel} at {ref}"):
        output = repo.git.blame("--porcelain", ref, "--", rel, strip_newline_in_stdout=False)
        commits = {
            c.sha: c for c in parse_log(repo.git.log(f"--format={LOG_FORMAT}", ref, strip_newline_in_stdout=False))
        }
    lines: list[BlameLine] = []
    sha, final_line = "", 0
    for raw in output.split("\n"):
        if raw.startswith("\t"):
            commit = commits.get(sha)
            if commit is None:
                raise VersionControlError(f"cannot blame {rel} at {ref} in {where}: unknown commit {sha}")
            lines.append(BlameLine(final_line, raw[1:], commit))
            continue
        parts = raw.split(" ")
        if len(parts) >= 3 and len(parts[0]) == 40 and set(parts[0]) <= _HEX:
            sha, final_line = parts[0], int(parts[2])
    return lines


def export_tree(repo: git.Repo, where: Path, ref: str, dest: Path) -> list[str]:
    """Write every file of commit ``ref`` into the folder ``dest``; return their paths, sorted.

    ``dest`` is created when missing and must be empty. Executable bits are
    kept; symbolic links and submodules are skipped (debate branches hold
    neither). No ``.git`` is written: the result is plain files.

    Raises:
        VersionControlError: ``dest`` is not an empty folder, ``ref`` does not exist, or git or the file system fails.
    """
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise VersionControlError(f"{dest} is not an empty folder; choose a new or empty one")
    written: list[str] = []
    sha = resolve(repo, where, ref)
    with git_errors(where, f"export {ref} to {dest}"):
        commit = repo.commit(sha)
        dest.mkdir(parents=True, exist_ok=True)
        root = dest.resolve()
        for item in commit.tree.traverse():
            if not isinstance(item, git.Blob) or stat.S_IFMT(item.mode) != stat.S_IFREG:
                continue
            target = root.joinpath(*PurePosixPath(item.path).parts)
            if not target.resolve().is_relative_to(root):
                raise VersionControlError(f"{item.path!r} in {ref} leads outside {dest}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(item.data_stream.read())
            if item.mode & 0o111:
                target.chmod(target.stat().st_mode | 0o111)
            written.append(str(item.path))
    return sorted(written)


def find_file(repo: git.Repo, where: Path, ref: str, content: str, prefer: tuple[str, ...] = ()) -> str | None:
    """The path of a file in commit ``ref`` whose content is exactly ``content``, or None.

    Paths in ``prefer`` are tried first, then every file of the commit in path order.

    Raises:
        VersionControlError: ``ref`` does not exist, or git fails.
    """
    data = content.encode("utf-8")
    wanted = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
    sha = resolve(repo, where, ref)
    with git_errors(where, f"search commit {ref}"):
        tree = repo.commit(sha).tree
        for path in prefer:
            try:
                item = tree / _checked(path, where)
            except KeyError:
                continue
            if isinstance(item, git.Blob) and item.hexsha == wanted:
                return path
        blobs = sorted(
            str(item.path) for item in tree.traverse() if isinstance(item, git.Blob) and item.hexsha == wanted
        )
    return blobs[0] if blobs else None
