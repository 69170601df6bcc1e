"""A session worktree's commits written and read in process through libgit2 (pygit2).

``SessionCommits.commit`` records what ``git add`` + ``git commit -- <path>``
record for one plain file: the blob, the trees on its path and the commit (the
message cleaned up as ``git commit -m`` does, debatecode's identity, the
parent), the branch moved only if it still holds the parent (libgit2 takes
git's ``<ref>.lock``), the reflog lines of the branch and of the worktree's
``HEAD``, and the file's index entry with its stat data, so ``git status`` is
clean. Where libgit2 would store other bytes than git (a filter applies), or
the ref or index is locked or moved, it raises ``DirectWriteRefused`` and the
caller lets git's command do the commit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, RepositoryOpenFlag

from debatecode.vcs._git import (
    AUTHOR_EMAIL,
    AUTHOR_NAME,
    REGULAR_FILE_MODE,
    DirectWriteRefused,
    blob_sha,
    cleanup_message,
    reflog_message,
)

__all__ = ["HeadEntry", "HeadState", "SessionCommits", "ident_text", "open_repository", "signature"]


def signature(timestamp: int | None = None) -> pygit2.Signature:
    """``debatecode <debatecode@localhost>`` at ``timestamp`` (default: now) in the local zone, as git signs commits."""
    now = int(time.time()) if timestamp is None else timestamp
    return pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL, now, time.localtime(now).tm_gmtoff // 60)


def ident_text(who: pygit2.Signature) -> str:
    """``name <email> <unix time> <zone>``, as git writes an identity in commits and reflogs."""
    sign = "-" if who.offset < 0 else "+"
    return f"{who.name} <{who.email}> {who.time} {sign}{abs(who.offset) // 60:02d}{abs(who.offset) % 60:02d}"


def open_repository(path: Path) -> pygit2.Repository:
    """libgit2's view of the repository or worktree at ``path`` (no search upwards), signing reflogs as debatecode.

    Raises:
        pygit2.GitError: ``path`` is not a repository or worktree.
    """
    repo = pygit2.Repository(str(path), RepositoryOpenFlag.NO_SEARCH)
    repo.set_ident(AUTHOR_NAME, AUTHOR_EMAIL)
    return repo


@dataclass(frozen=True, slots=True)
class HeadEntry:
    """A path's entry in a commit's tree: ``blob``, ``tree`` or ``submodule``, its mode and its object id."""

    kind: str
    mode: int
    sha: str


@dataclass(frozen=True, slots=True)
class HeadState:
    """How a plain file about to be committed stands against ``HEAD``: in its tree or not, changed, and ``HEAD``."""

    tracked: bool
    changed: bool
    parent: str


class SessionCommits:
    """Reads of ``HEAD`` and in-process commits in one worktree (``repo``: its ``open_repository``).

    Not thread-safe, like the worktree that holds it. pygit2 errors pass through (the worktree translates them).
    """

    def __init__(self, repo: pygit2.Repository) -> None:
        self._repo = repo

    def head_sha(self) -> str:
        """The sha of the commit ``HEAD`` names.

        Raises:
            pygit2.GitError: ``HEAD`` names no commit.
        """
        return str(self._repo.head.target)

    def _object(self, sha: str) -> pygit2.Object:
        try:
            return self._repo[sha]
        except KeyError:
            raise pygit2.GitError(f"object {sha} is missing from the repository") from None

    def entry(self, relpath: str, commit: str | None = None) -> HeadEntry | None:
        """The entry of ``relpath`` in the tree of ``commit`` (default: ``HEAD``), or None when it holds no such path.

        Raises:
            pygit2.GitError: ``HEAD`` names no commit, or an object is missing.
        """
        tree = self._object(commit or self.head_sha()).peel(pygit2.Commit).tree
        try:
            found = tree[relpath]
        except KeyError:
            return None
        kind = {"tree": "tree", "commit": "submodule"}.get(found.type_str, "blob")
        return HeadEntry(kind, found.filemode, str(found.id))

    def state(self, rel: str, data: bytes) -> HeadState | None:
        """Whether ``rel`` is in ``HEAD`` and whether ``data`` differs from it; None when ``HEAD`` holds it as other
        than a plain file (a folder, a submodule, an executable or a symlink): git's commands decide then."""
        parent = self.head_sha()
        entry = self.entry(rel, parent)
        if entry is None:
            return HeadState(tracked=False, changed=True, parent=parent)
        if entry.kind != "blob" or entry.mode != REGULAR_FILE_MODE:
            return None
        return HeadState(tracked=True, changed=entry.sha != blob_sha(data), parent=parent)

    def content(self, entry: HeadEntry) -> bytes:
        """The bytes of the blob ``entry``."""
        return bytes(self._object(entry.sha).peel(pygit2.Blob).data)

    def commit(self, rel: str, data: bytes, message: str, parent: str) -> str:
        """Commit ``data`` (already written in the worktree) as plain file ``rel`` on top of ``parent``; return the sha.

        ``message`` is given as to ``git commit -m``.

        Raises:
            DirectWriteRefused: git must do this commit (nothing of it was recorded but objects).
            pygit2.GitError, OSError: the repository or the file system fails.
        """
        repo = self._repo
        head = repo.lookup_reference("HEAD")
        branch = head.target if head.type == pygit2.enums.ReferenceType.SYMBOLIC else None
        if not isinstance(branch, str) or not branch.startswith("refs/heads/"):
            raise DirectWriteRefused("HEAD is detached")
        if repo.load_filter_list(rel) is not None:
            raise DirectWriteRefused(f"a filter of libgit2's applies to {rel} (core.autocrlf or core.eol)")
        index = repo.index
        try:
            index.read(True)
            index.add(rel)  # hashes and stores the file, with its stat data
        except pygit2.GitError as exc:
            raise DirectWriteRefused(f"the index cannot take {rel}: {exc}") from exc
        added = index[rel]
        if str(added.id) != blob_sha(data) or added.mode != REGULAR_FILE_MODE:
            raise DirectWriteRefused(f"{rel} would be stored otherwise than its bytes")
        tree = _tree_with_file(repo, repo[parent].peel(pygit2.Commit).tree, rel.split("/"), added.id)
        text = cleanup_message(message)
        who = signature()
        sha = repo.create_commit(None, who, who, text, tree, [pygit2.Oid(hex=parent)])
        try:
            index.write()  # before the branch moves: a failure here leaves git a staged file to commit, not a stale index
            ref = repo.lookup_reference(branch)
            if str(ref.target) != parent:
                raise DirectWriteRefused(f"{branch} moved to {ref.target}, expected {parent}")
            ref.set_target(sha, reflog_message("commit", text))  # fails if the ref moved after the lookup
        except (pygit2.GitError, OSError) as exc:
            raise DirectWriteRefused(f"cannot move {branch}: {exc}") from exc
        (Path(repo.path) / "COMMIT_EDITMSG").write_text(text, encoding="utf-8")
        return str(sha)


def _tree_with_file(
    repo: pygit2.Repository, root: pygit2.Tree | None, parts: list[str], blob: pygit2.Oid
) -> pygit2.Oid:
    """Write the trees of ``root`` with ``blob`` as a plain file at path ``parts``; return the new root tree's id.

    Raises:
        DirectWriteRefused: a folder on the path is a file, or the path is a folder or submodule.
    """
    builder = repo.TreeBuilder(root) if root is not None else repo.TreeBuilder()
    name = parts[0]
    found = root[name] if root is not None and name in root else None
    if len(parts) == 1:
        if found is not None and found.filemode in (FileMode.TREE, FileMode.COMMIT):
            raise DirectWriteRefused(f"{name!r} is a {found.type_str}")
        builder.insert(name, blob, FileMode.BLOB)
    else:
        if found is not None and found.filemode != FileMode.TREE:
            raise DirectWriteRefused(f"{name!r} is not a folder")
        below = repo[found.id].peel(pygit2.Tree) if found is not None else None
        builder.insert(name, _tree_with_file(repo, below, parts[1:], blob), FileMode.TREE)
    return builder.write()
