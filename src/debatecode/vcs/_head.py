"""What a session worktree's ``HEAD`` holds, kept in process so that most commits need no git call to decide.

A version is committed only when it differs from ``HEAD``. Asking git costs
a ``git add`` and a ``git diff --cached`` per version; ``HeadFiles`` answers
from one ``git ls-tree`` per session instead, kept up to date with the
commits made through it and read again whenever ``HEAD`` moved otherwise.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from debatecode.vcs._git import REGULAR_FILE_MODE, blob_sha, git

__all__ = ["HeadEntry", "HeadFiles", "attribute_files_outside_tree"]

_TREE_MODE = 0o40000
_KIND_NAMES = {"commit": "submodule"}


@dataclass(frozen=True, slots=True)
class HeadEntry:
    """One path of ``HEAD``'s tree, as ``git ls-tree`` lists it."""

    mode: int
    kind: str
    sha: str

    @property
    def kind_name(self) -> str:
        """``blob``, ``tree`` or ``submodule``."""
        return _KIND_NAMES.get(self.kind, self.kind)


class HeadFiles:
    """The paths of the commit a worktree's ``HEAD`` points at, with the file contents read so far.

    Not thread-safe, like the worktree that holds it. Git errors pass through
    (the worktree translates them).
    """

    def __init__(self, repo: git.Repo) -> None:
        self._repo = repo
        self._sha: str | None = None
        self._entries: dict[str, HeadEntry] = {}
        self._contents: dict[str, bytes] = {}

    def head_sha(self) -> str:
        """The sha ``HEAD`` points at, read from the ref files (no git process).

        Raises:
            ValueError: ``HEAD`` names no commit.
        """
        return git.SymbolicReference.dereference_recursive(self._repo, "HEAD")

    def entry(self, relpath: str) -> HeadEntry | None:
        """The entry of ``relpath`` in ``HEAD``'s tree, or None when it holds no such path.

        Raises:
            git.GitCommandError: listing the tree fails.
            ValueError: ``HEAD`` names no commit.
        """
        self._follow_head()
        return self._entries.get(relpath)

    def content(self, relpath: str, entry: HeadEntry) -> bytes:
        """The bytes of the blob ``entry`` of ``relpath`` (from ``entry()``), read once.

        Raises:
            git.GitCommandError: reading the blob fails.
        """
        if relpath not in self._contents:
            self._contents[relpath] = self._repo.git.cat_file(
                "blob", entry.sha, stdout_as_string=False, strip_newline_in_stdout=False
            )
        return self._contents[relpath]

    def committed(self, relpath: str, data: bytes) -> None:
        """Record that ``HEAD``, as last listed, just got one commit storing ``data`` at ``relpath`` as a plain file.

        Raises:
            ValueError: ``HEAD`` names no commit.
        """
        if self._sha is None:
            return
        for folder in PurePosixPath(relpath).parents:
            if folder.parts:
                self._entries.setdefault(folder.as_posix(), HeadEntry(_TREE_MODE, "tree", ""))
        self._entries[relpath] = HeadEntry(REGULAR_FILE_MODE, "blob", blob_sha(data))
        self._contents[relpath] = data
        self._sha = self.head_sha()

    def forget(self) -> None:
        """List the tree again on the next question (after a commit this object did not follow)."""
        self._sha = None

    def _follow_head(self) -> None:
        sha = self.head_sha()
        if sha == self._sha:
            return
        output = self._repo.git.ls_tree("-r", "-t", "-z", "--full-tree", sha, strip_newline_in_stdout=False)
        entries = {}
        for record in output.split("\0"):
            meta, tab, path = record.partition("\t")
            if tab:
                mode, kind, object_sha = meta.split()
                entries[path] = HeadEntry(int(mode, 8), kind, object_sha)
        self._sha, self._entries, self._contents = sha, entries, {}


def attribute_files_outside_tree(repo: git.Repo) -> bool:
    """Whether an attributes file outside the worktree (repository, user or system) may filter what git stores."""
    configured = repo.config_reader().get_value("core", "attributesFile", "")
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    candidates = (Path(repo.common_dir) / "info" / "attributes", xdg / "git" / "attributes", Path("/etc/gitattributes"))
    return bool(configured) or any(candidate.exists() for candidate in candidates)
