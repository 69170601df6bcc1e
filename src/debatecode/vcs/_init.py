"""``git init --initial-branch=<branch>`` done in process: the ``.git`` folder git 2.39 writes on Linux, or a refusal.

What ``git init`` writes there (``builtin/init-db.c``), each folder ``0777`` and
each file ``0666`` less the umask, as git creates them:

- the files of git's template folder (``<prefix>/share/git-core/templates``:
  ``description``, ``info/exclude``, ``hooks/*.sample``, ``branches/``), copied as
  git copies them: names starting with ``.`` skipped, executables ``0777``;
- ``refs/heads``, ``refs/tags``, ``HEAD`` (``ref: refs/heads/<branch>``);
- ``config``: ``[core]`` repositoryformatversion 0, filemode true, bare false,
  logallrefupdates true, after git's probes of the file system (an executable bit
  on ``config``, a symlink, a case-folding name);
- ``objects/info`` and ``objects/pack``.

Git decides instead (``init_blocker``, or ``DirectWriteRefused`` raised before
anything is in place) when the result could be another: a platform other than
Linux, an environment or configuration that redirects git or changes its format
(``GIT_TEMPLATE_DIR``, ``GIT_DEFAULT_HASH``, any ``init.*`` key but
``defaultBranch``, ``core.logAllRefUpdates``, and ``in_process_blocker``'s list),
a template folder that is not where git looks or holds what git itself writes,
or a probe whose answer is not Linux's usual one.

The folder is assembled under a temporary name next to ``.git`` and renamed into
place, so another process sees either no repository or a whole one, with what
``prepare`` added (the first commit and the exclude line).
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from debatecode.vcs._direct import identity, in_process_blocker
from debatecode.vcs._git import INITIAL_MESSAGE, MAIN_BRANCH, WORKTREES_DIR, DirectWriteRefused, git
from debatecode.vcs._objects import ObjectStore, commit_object
from debatecode.vcs._refs import reflog_line, update_ref

__all__ = ["CONFIG_TEXT", "exclude_worktrees", "init_blocker", "init_repository", "start_history", "template_dir"]

CONFIG_TEXT = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
_PROBED_CONFIG = "[core]\n\trepositoryformatversion = 0\n"  # what config holds when git probes its mode
_ENVIRONMENT = ("GIT_TEMPLATE_DIR", "GIT_DEFAULT_HASH", "GIT_DEFAULT_REF_FORMAT")
# Names git writes itself: a template holding one would change what init does.
_OWN_NAMES = frozenset({"HEAD", "config", "refs", "objects", "logs", "index", "packed-refs", "worktrees", "commondir"})


def template_dir() -> Path | None:
    """The template folder git copies from: ``<prefix>/share/git-core/templates`` next to the git it runs; None if missing."""
    folder = _templates_next_to(git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git", os.environ.get("PATH", os.defpath))
    return folder if folder is not None and folder.is_dir() else None


@functools.lru_cache(maxsize=8)
def _templates_next_to(command: str, search_path: str) -> Path | None:
    """Where git's templates would be for ``command`` found on ``search_path`` (kept: a PATH search per session costs)."""
    executable = shutil.which(command, path=search_path)
    if executable is None:
        return None
    return Path(executable).resolve().parent.parent / "share" / "git-core" / "templates"


def init_blocker(config: dict[str, str]) -> str | None:
    """Why ``git init`` must run as a process here (``config``: the system and user configuration), or None."""
    if sys.platform != "linux":
        return f"git probes the file system of {sys.platform} otherwise"
    for name in _ENVIRONMENT:
        if os.environ.get(name):
            return f"{name} is set"
    for key in config:
        if (key.startswith("init.") and key != "init.defaultbranch") or key == "core.logallrefupdates":
            return f"{key} is set"
    blocker = in_process_blocker(config)
    if blocker is None and template_dir() is None:
        return "git's template folder is not at <prefix>/share/git-core/templates"
    return blocker


_TemplateEntry = tuple[str, int, bytes]
"""A template entry as git copies it: relative path, mode (0 for a folder) and content (empty for a folder)."""
_templates: dict[str, tuple[tuple[tuple[str, int, int, int], ...], list[_TemplateEntry]]] = {}
_templates_lock = threading.Lock()


def _template_files(root: Path) -> list[_TemplateEntry]:
    """The template's entries as git copies them, parents first, with each file's content.

    The contents are read again only when an entry's mode, size or modification time changed.

    Raises:
        DirectWriteRefused: the template holds a symlink, a special file, or a name git writes itself.
    """
    listing: list[tuple[str, int, int, int]] = []  # relative path, st_mode, size, mtime
    pending = [""]
    while pending:
        relative = pending.pop(0)
        with os.scandir(os.path.join(root, relative)) as scan:
            entries = sorted((e for e in scan if not e.name.startswith(".")), key=lambda e: (not e.is_dir(), e.name))
        for entry in entries:
            name = f"{relative}/{entry.name}" if relative else entry.name
            if not relative and entry.name in _OWN_NAMES:
                raise DirectWriteRefused(f"git's template folder holds {entry.name}")
            found = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(found.st_mode):
                pending.append(name)
            elif not stat.S_ISREG(found.st_mode):
                raise DirectWriteRefused(f"git's template folder holds {name}, which is not a plain file")
            listing.append((name, found.st_mode, found.st_size, found.st_mtime_ns))
    key = tuple(listing)
    with _templates_lock:
        cached = _templates.get(str(root))
    if cached is not None and cached[0] == key:
        return cached[1]
    files: list[_TemplateEntry] = []
    for name, mode, _size, _mtime in listing:
        if stat.S_ISDIR(mode):
            files.append((name, 0, b""))
        else:
            files.append((name, 0o777 if mode & 0o111 else 0o666, (root / name).read_bytes()))
    with _templates_lock:
        _templates[str(root)] = (key, files)
    return files


def _write_new(path: Path, data: bytes, mode: int = 0o666) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _probe(git_dir: Path) -> None:
    """git's file-system probes; anything but Linux's usual answers is refused.

    Raises:
        DirectWriteRefused: the executable bit does not stick, symlinks fail, or names fold case.
    """
    config = git_dir / "config"
    before = os.lstat(config).st_mode
    os.chmod(config, before ^ stat.S_IXUSR)
    trusted = os.lstat(config).st_mode != before
    os.chmod(config, before)
    if not trusted or before & stat.S_IXUSR:
        raise DirectWriteRefused("the file system does not keep the executable bit (git writes filemode = false)")
    fd, probe = tempfile.mkstemp(prefix="t", dir=git_dir)
    os.close(fd)
    os.unlink(probe)
    try:
        os.symlink("testing", probe)
        linked = os.path.islink(probe)
    except OSError:
        linked = False
    finally:
        if os.path.lexists(probe):
            os.unlink(probe)
    if not linked:
        raise DirectWriteRefused("the file system has no symlinks (git writes symlinks = false)")
    if os.path.lexists(git_dir / "CoNfIg"):
        raise DirectWriteRefused("the file system folds case (git writes ignorecase = true)")


def _fill(git_dir: Path, templates: Path, initial_branch: str) -> None:
    for relative, mode, content in _template_files(templates):
        if mode == 0:
            (git_dir / relative).mkdir(0o777, exist_ok=True)
        else:
            _write_new(git_dir / relative, content, mode)
    for folder in ("refs", "refs/heads", "refs/tags"):
        (git_dir / folder).mkdir(0o777, exist_ok=True)
    _write_new(git_dir / "HEAD", f"ref: refs/heads/{initial_branch}\n".encode("ascii"))
    _write_new(git_dir / "config", _PROBED_CONFIG.encode("ascii"))
    _probe(git_dir)
    (git_dir / "config").write_text(CONFIG_TEXT, encoding="ascii")
    for folder in ("objects", "objects/pack", "objects/info"):
        (git_dir / folder).mkdir(0o777, exist_ok=True)


def init_repository(work_tree: Path, initial_branch: str, prepare: Callable[[Path], None]) -> bool:
    """Create ``work_tree/.git`` as ``git init --initial-branch=<initial_branch>`` would; False if another process did first.

    ``prepare`` gets the new git folder before it is moved into place (it may add
    objects, refs and files). The caller has checked ``init_blocker``.

    Raises:
        DirectWriteRefused: git must do it (nothing was put in place).
        OSError: the file system fails.
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
        _fill(building, templates, initial_branch)
        prepare(building)
        try:
            building.rename(work_tree / ".git")
        except OSError:
            if not (work_tree / ".git").exists():
                raise
            return False  # another process made the repository meanwhile: theirs is used
        return True
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)


def start_history(common_dir: Path) -> None:
    """Give the unborn ``main`` of a repository whose ``HEAD`` names it an empty first commit, and exclude ``.worktrees/``.

    What ``git mktree``, ``git commit-tree`` and ``git update-ref`` would write, without the processes.

    Raises:
        RefMoved, LockTaken: ``main`` exists meanwhile, or another process is writing it.
        OSError: the file system fails.
    """
    objects = ObjectStore(common_dir / "objects")
    who = identity()
    first = objects.store("commit", commit_object(objects.store("tree", b""), [], who, INITIAL_MESSAGE + "\n"))
    update_ref(
        common_dir,
        f"refs/heads/{MAIN_BRANCH}",
        first,
        None,  # only if it does not exist yet
        reflog=reflog_line(None, first, who, ""),
        head_logs=(common_dir / "logs" / "HEAD",),
    )
    exclude_worktrees(common_dir)


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
