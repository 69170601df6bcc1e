"""Git's configuration as the in-process writers read it, and when a write must be left to git's own commands.

libgit2 (through pygit2) writes a session's repository, worktree and commits
in process. It records what git records only where nothing redirects git or
changes its format: ``in_process_blocker`` (commits and worktrees),
``init_blocker`` (a new repository) and ``add_blocker`` (a new worktree) say
why not, and the caller then runs git's command. The configuration is read
as git reads it (system, user, repository files), parsed once per distinct
content.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import shutil
from pathlib import Path

from git.config import GitConfigParser

from debatecode.vcs._git import git

__all__ = [
    "add_blocker",
    "attribute_files_outside_tree",
    "git_config",
    "in_process_blocker",
    "init_blocker",
    "template_dir",
]

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
_INIT_ENVIRONMENT = ("GIT_TEMPLATE_DIR", "GIT_DEFAULT_HASH", "GIT_DEFAULT_REF_FORMAT")
# Names git writes itself: a template holding one would change what init does.
_OWN_NAMES = frozenset({"HEAD", "config", "refs", "objects", "logs", "index", "packed-refs", "worktrees", "commondir"})
# Settings that change what ``git branch`` or ``git worktree add`` write in a new worktree.
_ADD_KEYS = ("core.worktree", "core.sparsecheckout", "core.untrackedcache", "branch.autosetuprebase")


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
    """Why commits and worktrees cannot be written in process here, or None when they can."""
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
    for name in _INIT_ENVIRONMENT:
        if os.environ.get(name):
            return f"{name} is set"
    for key in config:
        if (key.startswith("init.") and key != "init.defaultbranch") or key == "core.logallrefupdates":
            return f"{key} is set"
    blocker = in_process_blocker(config)
    if blocker is not None:
        return blocker
    templates = template_dir()
    if templates is None:
        return "git's template folder is not at <prefix>/share/git-core/templates"
    try:
        own = sorted(_OWN_NAMES.intersection(os.listdir(templates)))
    except OSError as exc:
        return f"git's template folder cannot be read: {exc}"
    return f"git's template folder holds {own[0]}" if own else None


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


def attribute_files_outside_tree(config: dict[str, str], common_dir: Path) -> bool:
    """Whether an attributes file outside the worktree (repository, user or system) may filter what git stores.

    ``config``: git's configuration for the repository (``git_config``). A configuration that includes other
    files might set ``core.attributesFile`` there, so it counts as one.
    """
    if config.get("core.attributesfile") or any(key.startswith(("include.", "includeif.")) for key in config):
        return True
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    candidates = (common_dir / "info" / "attributes", xdg / "git" / "attributes", Path("/etc/gitattributes"))
    return any(candidate.exists() for candidate in candidates)
