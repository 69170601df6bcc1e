"""What a session worktree's ``HEAD`` holds, read in process, so that most commits need no git call to decide.

A version is committed only when it differs from ``HEAD``. Asking git costs
a ``git add`` and a ``git diff --cached`` per version; ``HeadFiles`` answers
from the object database instead: ``HEAD``'s sha from the ref files, its tree
and the entries on a path from the objects (commits and trees never change,
so what was read once is kept).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from debatecode.vcs._git import git
from debatecode.vcs._objects import ObjectStore, TreeEntry
from debatecode.vcs._refs import read_ref, symbolic_head

__all__ = ["HeadFiles", "attribute_files_outside_tree"]


class HeadFiles:
    """The paths of the commit a worktree's ``HEAD`` points at, and their contents.

    Not thread-safe, like the worktree that holds it. gitdb errors pass
    through (the worktree translates them).
    """

    def __init__(self, git_dir: Path, common_dir: Path, objects: ObjectStore, repo: Callable[[], git.Repo]) -> None:
        """``git_dir``/``common_dir``: the worktree's and the repository's git folders; ``repo``: GitPython's view of
        the worktree, asked only when ``HEAD`` is not a plain branch."""
        self._git_dir = git_dir
        self._common_dir = common_dir
        self._objects = objects
        self._repo = repo
        self._trees: dict[str, str] = {}

    def head_sha(self) -> str:
        """The sha ``HEAD`` points at, read from the ref files (no git process).

        Raises:
            ValueError: ``HEAD`` names no commit.
        """
        ref = symbolic_head(self._git_dir)
        sha = read_ref(self._common_dir, ref) if ref is not None and ref.startswith("refs/heads/") else None
        if sha is None or len(sha) != 40:  # detached, unborn or unusual: GitPython's full resolution decides
            return git.SymbolicReference.dereference_recursive(self._repo(), "HEAD")
        return sha

    def tree_sha(self, commit: str) -> str:
        """The sha of commit ``commit``'s tree.

        Raises:
            gitdb.exc.BadObject: no such commit.
        """
        if commit not in self._trees:
            header = self._objects.read(commit).partition(b"\n")[0]
            self._trees[commit] = header.removeprefix(b"tree ").decode("ascii")
        return self._trees[commit]

    def entry(self, relpath: str, commit: str | None = None) -> TreeEntry | None:
        """The entry of ``relpath`` in the tree of ``commit`` (default: ``HEAD``), or None when it holds no such path.

        Raises:
            ValueError: ``HEAD`` names no commit.
            gitdb.exc.BadObject: an object is missing.
        """
        tree = self.tree_sha(commit or self.head_sha())
        return self._objects.entry(tree, tuple(relpath.encode("utf-8").split(b"/")))

    def content(self, entry: TreeEntry) -> bytes:
        """The bytes of the blob ``entry`` (from ``entry()``).

        Raises:
            gitdb.exc.BadObject: the blob is missing.
        """
        return self._objects.read(entry.sha)


def attribute_files_outside_tree(config: dict[str, str], common_dir: Path) -> bool:
    """Whether an attributes file outside the worktree (repository, user or system) may filter what git stores.

    ``config``: git's configuration for the repository (``_direct.git_config``). A configuration that
    includes other files might set ``core.attributesFile`` there, so it counts as one.
    """
    if config.get("core.attributesfile") or any(key.startswith(("include.", "includeif.")) for key in config):
        return True
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    candidates = (common_dir / "info" / "attributes", xdg / "git" / "attributes", Path("/etc/gitattributes"))
    return any(candidate.exists() for candidate in candidates)
