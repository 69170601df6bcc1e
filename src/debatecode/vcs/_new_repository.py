"""A new output folder's repository made in process through libgit2: ``git init``, an empty first commit on ``main``.

``init_repository`` has libgit2 make the ``.git`` folder from git's own
template folder (``_config.template_dir``) under a temporary name next to
``.git``, lets ``prepare`` add to it, and renames it into place, so another
process sees either no repository or a whole one. ``start_history`` gives
``main`` its empty first commit (what ``git mktree``, ``git commit-tree`` and
``git update-ref`` would write) and excludes ``.worktrees/``.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

import pygit2
from pygit2.enums import RepositoryInitFlag

from debatecode.vcs._commits import signature
from debatecode.vcs._config import template_dir
from debatecode.vcs._git import (
    AUTHOR_EMAIL,
    AUTHOR_NAME,
    INITIAL_MESSAGE,
    MAIN_BRANCH,
    WORKTREES_DIR,
    DirectWriteRefused,
)

__all__ = ["exclude_worktrees", "has_commits", "init_repository", "start_history"]


def init_repository(work_tree: Path, initial_branch: str, prepare: Callable[[pygit2.Repository], None]) -> bool:
    """Create ``work_tree/.git`` as ``git init --initial-branch=<initial_branch>`` would; False if another process did first.

    ``prepare`` gets the new repository before its folder is moved into place (it may add objects, refs and
    files). The caller has checked ``_config.init_blocker``.

    Raises:
        DirectWriteRefused: git must do it (nothing was put in place).
        pygit2.GitError, OSError: libgit2 or the file system fails.
    """
    templates = template_dir()
    if templates is None:
        raise DirectWriteRefused("git's template folder is not at <prefix>/share/git-core/templates")
    while True:
        building = work_tree / f".git.init-{secrets.token_hex(6)}"
        try:
            building.mkdir(0o777)
            break
        except FileExistsError:
            continue
    try:
        flags = RepositoryInitFlag.NO_REINIT | RepositoryInitFlag.MKDIR | RepositoryInitFlag.EXTERNAL_TEMPLATE
        repo = pygit2.init_repository(
            str(building), flags=flags, template_path=str(templates), initial_head=initial_branch
        )
        repo.set_ident(AUTHOR_NAME, AUTHOR_EMAIL)
        for folder, subfolders, _ in os.walk(templates):  # libgit2 copies no empty folder of the template; git does
            subfolders[:] = [name for name in subfolders if not name.startswith(".")]  # as git skips them
            (building / ".git" / os.path.relpath(folder, templates)).mkdir(0o777, exist_ok=True)
        prepare(repo)
        repo.free()
        try:
            (building / ".git").rename(work_tree / ".git")
        except OSError:
            if not (work_tree / ".git").exists():
                raise
            return False  # another process made the repository meanwhile: theirs is used
        return True
    finally:
        shutil.rmtree(building, ignore_errors=True)


def start_history(repo: pygit2.Repository) -> None:
    """Give the unborn ``main`` of a repository whose ``HEAD`` names it an empty first commit, and exclude ``.worktrees/``.

    Raises:
        DirectWriteRefused: ``main`` exists meanwhile, or another process is writing it.
        pygit2.GitError, OSError: libgit2 or the file system fails.
    """
    who = signature()
    first = repo.create_commit(None, who, who, INITIAL_MESSAGE + "\n", repo.TreeBuilder().write(), [])
    try:
        repo.create_reference_direct(f"refs/heads/{MAIN_BRANCH}", first, False)  # only if it does not exist yet
    except (pygit2.AlreadyExistsError, OSError) as exc:
        raise DirectWriteRefused(f"{MAIN_BRANCH} was started meanwhile: {exc}") from exc
    exclude_worktrees(Path(repo.path))


def has_commits(repo: pygit2.Repository) -> bool:
    """Whether ``HEAD`` of ``repo`` names a commit (attached or detached)."""
    try:
        if repo.head_is_unborn:
            return False
        repo.head.peel(pygit2.Commit)
        return True
    except (pygit2.GitError, KeyError, ValueError):
        return False


def exclude_worktrees(common_dir: Path) -> None:
    """Add ``.worktrees/`` to the repository's ``info/exclude`` unless it is there."""
    exclude = common_dir / "info" / "exclude"
    existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if f"{WORKTREES_DIR}/" in (line.strip().lstrip("/") for line in existing.splitlines()):
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    separator = "" if not existing or existing.endswith("\n") else "\n"
    with exclude.open("a", encoding="utf-8") as handle:
        handle.write(f"{separator}# debatecode session worktrees\n{WORKTREES_DIR}/\n")
