"""Where a work tree's git folders are, read from git's own files, so that opening a session needs no GitPython ``Repo``.

A ``git.Repo`` reads the configuration and probes the folders each time it is
made; a debate session used to make two. ``plain_folders`` reads the same
answer from the layout git writes: a ``.git`` folder, or a ``.git`` file naming
a linked worktree's admin folder, whose ``commondir`` names the repository's.
Anything else (a relative or missing link, a folder without ``HEAD``,
``objects`` or ``refs``) gets None, and the caller asks GitPython, which also
says what is wrong.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GitFolders", "plain_folders"]


@dataclass(frozen=True, slots=True)
class GitFolders:
    """A work tree's git folder (its ``HEAD`` and index) and the repository's common folder (objects and refs)."""

    git_dir: Path
    common_dir: Path


def plain_folders(work_tree: Path) -> GitFolders | None:
    """The git folders of the repository or linked worktree at ``work_tree``, or None when the layout is not git's plain one."""
    dot_git = work_tree / ".git"
    try:
        if dot_git.is_dir():
            git_dir = dot_git
        else:
            text = dot_git.read_text(encoding="utf-8")
            if not text.startswith("gitdir: ") or text.count("\n") > 1:
                return None
            git_dir = Path(text.removeprefix("gitdir: ").rstrip("\n"))
            if not git_dir.is_absolute():
                return None
        try:
            common_text = (git_dir / "commondir").read_text(encoding="utf-8")
        except FileNotFoundError:
            common_dir = git_dir
        else:
            if common_text.count("\n") > 1 or not common_text.strip():
                return None
            common_dir = Path(os.path.normpath(git_dir / common_text.strip()))
        if not (git_dir / "HEAD").is_file() or not (common_dir / "objects").is_dir():
            return None
        if not (common_dir / "refs").is_dir():
            return None
    except (OSError, UnicodeDecodeError):
        return None
    return GitFolders(git_dir, common_dir)
