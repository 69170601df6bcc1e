"""Commits of a session worktree made in process: what ``git add`` + ``git commit -- <path>`` would record, without a process.

``DirectCommits.commit`` stores the blob, the trees on its path and the
commit (same message cleanup, identity, tree modes and parent as ``git
commit``), moves the branch with git's lock protocol, appends the reflog
lines and sets the worktree index's entry, so ``git status`` is clean and
``git fsck --strict`` finds nothing. It works only where its result is
certainly git's; elsewhere ``blocker`` (for the repository and process) or
``Unsupported`` (for one commit, raised before anything is written) hands
the commit back to git.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import time
from pathlib import Path

from git.config import GitConfigParser

from debatecode.vcs._git import (
    AUTHOR_EMAIL,
    AUTHOR_NAME,
    REGULAR_FILE_MODE,
    cleanup_message,
    reflog_message,
)
from debatecode.vcs._index import index_entry_update
from debatecode.vcs._objects import ObjectStore, commit_object
from debatecode.vcs._refs import RefMoved, reflog_line, symbolic_head, update_ref

__all__ = ["DirectCommits", "git_config", "identity", "in_process_blocker"]

# Variables that change where git writes or what it records: with one set, git decides.
_ENVIRONMENT = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_DATE",
    "GIT_REFLOG_ACTION",
    "GIT_CONFIG_PARAMETERS",
    "GIT_COMMON_DIR",
)


def identity(timestamp: int | None = None) -> str:
    """``debatecode <debatecode@localhost> <unix time> <local zone>``, as git writes it in commits and reflogs."""
    now = int(time.time()) if timestamp is None else timestamp
    offset = time.localtime(now).tm_gmtoff // 60
    sign = "-" if offset < 0 else "+"
    return f"{AUTHOR_NAME} <{AUTHOR_EMAIL}> {now} {sign}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"


def _shared_config_files() -> tuple[str, ...]:
    """The system's and the user's configuration files git reads, in order."""
    return _shared_config_files_for(
        os.environ.get("GIT_CONFIG_NOSYSTEM"),
        os.environ.get("GIT_CONFIG_SYSTEM"),
        os.environ.get("GIT_CONFIG_GLOBAL"),
        os.environ.get("XDG_CONFIG_HOME"),
        os.environ.get("HOME"),
    )


@functools.lru_cache(maxsize=8)
def _shared_config_files_for(
    no_system: str | None, system: str | None, global_file: str | None, xdg: str | None, home: str | None
) -> tuple[str, ...]:
    files: list[str] = []
    if not no_system:
        files.append(system or "/etc/gitconfig")
    if global_file:
        files.append(global_file)
    else:
        user = Path(home) if home else Path.home()
        files.append(str(Path(xdg or user / ".config") / "git" / "config"))
        files.append(str(user / ".gitconfig"))
    return tuple(files)


def git_config(common_dir: Path | None) -> dict[str, str]:
    """Git's configuration for the repository: ``section[.subsection].key`` (section and key lower-cased) -> last value.

    ``common_dir`` None: the system's and the user's configuration only (for a repository not made yet).

    The system's and the user's files are parsed again only when one changed (by path, size and modification
    time); the repository's only when its content is new to this process (every new repository writes the same).

    Raises:
        OSError: a file cannot be read.
    """
    stamps = []
    for path in _shared_config_files():
        try:
            found = os.stat(path)
        except FileNotFoundError:
            stamps.append((path, -1, -1))
        else:
            stamps.append((path, found.st_mtime_ns, found.st_size))
    own = None
    if common_dir is not None:
        with contextlib.suppress(FileNotFoundError):
            own = (common_dir / "config").read_bytes()
    return dict(_read_config(tuple(stamps), own))


class _RepositoryConfig(io.BytesIO):
    """A repository's ``config`` read into memory, named as GitPython's parser wants a file to be."""

    name = "config"


@functools.lru_cache(maxsize=64)
def _read_config(stamps: tuple[tuple[str, int, int], ...], own: bytes | None) -> tuple[tuple[str, str], ...]:
    sources: list[str | io.BytesIO] = [path for path, _, size in stamps if size >= 0]
    if own is not None:
        sources.append(_RepositoryConfig(own))
    parser = GitConfigParser(sources, read_only=True, merge_includes=False)
    values: dict[str, str] = {}
    for section in parser.sections():
        name, _, subsection = section.partition(" ")
        prefix = name.lower() + ("." + subsection.strip('"') if subsection else "")
        for key, value in parser.items(section):
            values[f"{prefix}.{key.lower()}"] = str(value)
    return tuple(values.items())


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("true", "yes", "on", "1", "")


def in_process_blocker(config: dict[str, str]) -> str | None:
    """Why commits cannot be written in process here, or None when they can."""
    for name in _ENVIRONMENT:
        if os.environ.get(name):
            return f"{name} is set"
    if any(key.startswith(("include.", "includeif.")) for key in config):
        return "the git configuration includes other files"
    if any(key.startswith("extensions.") for key in config) or config.get("core.repositoryformatversion", "0") != "0":
        return "the repository uses format extensions"
    shared = config.get("core.sharedrepository", "false").strip().lower()
    if shared not in ("false", "umask", "0", "no", "off") or _truthy(config.get("core.bare", "false")):
        return "the repository is shared or bare"
    if config.get("commit.cleanup", "default").lower() not in ("default", "whitespace"):
        return "commit.cleanup is set"
    if config.get("i18n.commitencoding", "utf-8").lower().replace("-", "") != "utf8":
        return "i18n.commitEncoding is set"
    for key in ("core.splitindex", "core.fsmonitor", "index.skiphash", "feature.manyfiles"):
        if key in config and _truthy(config[key]):
            return f"{key} is set"
    return None


class DirectCommits:
    """In-process commits on one worktree's branch (``git_dir``: the worktree's admin folder).

    Not thread-safe, like the worktree that holds it.
    """

    def __init__(self, git_dir: Path, common_dir: Path, objects: ObjectStore, config: dict[str, str]) -> None:
        self._git_dir = git_dir
        self._common_dir = common_dir
        self.objects = objects
        log_updates = config.get("core.logallrefupdates")
        self._create_logs = log_updates is None or log_updates.lower() == "always" or _truthy(log_updates)

    def branch_ref(self) -> str | None:
        """The branch the worktree's ``HEAD`` points at, or None when detached."""
        return symbolic_head(self._git_dir)

    def commit(self, rel: str, data: bytes, target: Path, message: str, parent: str, tree: str) -> str:
        """Commit ``data`` (already written at ``target``) as plain file ``rel`` on top of ``parent``; return the sha.

        ``tree`` is ``parent``'s tree; ``message`` is given as to ``git commit -m``.

        Raises:
            DirectWriteRefused: git must do this commit (nothing of it was recorded).
            gitdb errors, OSError: the object database or file system fails.
        """
        ref = self.branch_ref()
        if ref is None or not ref.startswith("refs/heads/"):
            raise RefMoved("HEAD is detached")
        parts = tuple(rel.encode("utf-8").split(b"/"))
        with index_entry_update(self._git_dir / "index", b"/".join(parts)) as set_index_entry:
            blob = self.objects.store("blob", data)
            new_tree = self.objects.tree_with_file(tree, parts, blob, REGULAR_FILE_MODE)
            text = cleanup_message(message)
            who = identity()
            sha = self.objects.store("commit", commit_object(new_tree, [parent], who, text))
            update_ref(
                self._common_dir,
                ref,
                sha,
                parent,
                reflog=reflog_line(parent, sha, who, reflog_message("commit", text)),
                head_logs=(self._git_dir / "logs" / "HEAD",),
                create_logs=self._create_logs,
            )
            set_index_entry(blob, REGULAR_FILE_MODE, target.stat())
        (self._git_dir / "COMMIT_EDITMSG").write_text(text, encoding="utf-8")
        return sha
