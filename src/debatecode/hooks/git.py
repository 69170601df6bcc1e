"""Git hooks for teams: install a hook script, and collect the Python files a commit or push changes.

This module talks to the *team's* repository with the git CLI, honouring its
configuration (``core.hooksPath`` included). Git failures leave it as
``VersionControlError``; mistakes the user can fix (not a repository, a hook
already there, a malformed range) as ``UserError``.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from debatecode.errors import UserError, VersionControlError

__all__ = [
    "HOOK_MARKER",
    "HookKind",
    "InstalledHook",
    "SourceFile",
    "default_command",
    "files_from_paths",
    "hook_script",
    "install_hook",
    "pre_push_files",
    "pushed_files",
    "repository_root",
    "staged_files",
]

HookKind = Literal["pre-commit", "pre-push"]
HOOK_MARKER = "# debatecode-hook:"
"""Marks a hook script written by ``install_hook``; such a hook is replaced without ``--force``."""
_ZERO_SHA = frozenset("0")
_PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A Python file to validate: its path (relative to the repository root) and the content to check."""

    path: str
    code: str


@dataclass(frozen=True, slots=True)
class InstalledHook:
    """Where a hook was installed and where an existing foreign hook was moved to."""

    path: Path
    backup: Path | None


def _git(repo: Path, *args: str) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VersionControlError(f"cannot run git in {repo}: {exc}") from exc
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", errors="replace").strip()
        raise VersionControlError(f"git {' '.join(args[:2])} failed in {repo}: {message}")
    return proc.stdout


def repository_root(path: Path) -> Path:
    """The top folder of the git working tree containing ``path``.

    Raises:
        UserError: ``path`` is not inside a git working tree.
    """
    try:
        return Path(_git(path, "rev-parse", "--show-toplevel").decode().strip()).resolve()
    except VersionControlError as exc:
        raise UserError(f"{path} is not inside a git repository (run `git init` first): {exc}") from exc


def _hooks_dir(root: Path) -> Path:
    """The folder git runs hooks from (``core.hooksPath`` or ``.git/hooks``)."""
    raw = _git(root, "rev-parse", "--git-path", "hooks").decode().strip()
    path = Path(raw)
    return path if path.is_absolute() else (root / path).resolve()


def default_command() -> list[str]:
    """The command a hook runs: this interpreter with debatecode, so the hook needs nothing on PATH."""
    return [sys.executable, "-m", "debatecode.cli.app"]


def hook_script(kind: HookKind, command: list[str] | None = None) -> str:
    """The shell script of a ``kind`` hook that runs ``debatecode hook run``.

    The interpreter's absolute path is baked in; when it has gone (a removed
    virtualenv), the script falls back to ``debatecode`` on PATH.
    """
    argv = command or default_command()
    mode = "--staged" if kind == "pre-commit" else '--pre-push "$1"'
    fallback = "debatecode"
    return (
        "#!/bin/sh\n"
        f"{HOOK_MARKER} {kind}\n"
        f"# Installed by `debatecode hook install --{kind}`: validates the {'staged' if kind == 'pre-commit' else 'pushed'}"
        " Python files\n"
        "# (lint, complexity, security) and blocks on blocking findings. Skip once with `git commit --no-verify`.\n"
        f"if [ -x {shlex.quote(argv[0])} ]; then\n"
        f"    exec {shlex.join(argv)} hook run {mode}\n"
        "fi\n"
        f"exec {fallback} hook run {mode}\n"
    )


def _is_ours(path: Path) -> bool:
    try:
        return HOOK_MARKER in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def install_hook(repo: Path, kind: HookKind, *, force: bool = False, command: list[str] | None = None) -> InstalledHook:
    """Write the ``kind`` hook into the repository containing ``repo``.

    A hook written by debatecode is replaced. Any other existing hook is kept
    and the install refused, unless ``force``: it is then renamed to
    ``<kind>.debatecode-backup`` (``.1``, ``.2``, ... if that exists) first.

    Raises:
        UserError: ``repo`` is not in a git repository, or a foreign hook exists and ``force`` is off.
        VersionControlError: git or the file system fails.
    """
    root = repository_root(repo)
    hooks = _hooks_dir(root)
    target = hooks / kind
    backup: Path | None = None
    if target.exists() and not _is_ours(target):
        if not force:
            raise UserError(
                f"{target} already exists and was not written by debatecode. Keep it and chain debatecode from it "
                f"(add `debatecode hook run {'--staged' if kind == 'pre-commit' else '--pre-push origin'}`), "
                "use the pre-commit framework (see .pre-commit-hooks.yaml), or pass --force to move it to a backup."
            )
        backup = hooks / f"{kind}.debatecode-backup"
        number = 0
        while backup.exists():
            number += 1
            backup = hooks / f"{kind}.debatecode-backup.{number}"
    try:
        hooks.mkdir(parents=True, exist_ok=True)
        if backup is not None:
            target.rename(backup)
        target.write_text(hook_script(kind, command), encoding="utf-8")
        target.chmod(0o755)
    except OSError as exc:
        raise VersionControlError(f"cannot write hook {target}: {exc}") from exc
    return InstalledHook(target, backup)


def _is_python(path: str, code: str | None = None) -> bool:
    if path.endswith(_PYTHON_SUFFIXES):
        return True
    first = (code or "").split("\n", 1)[0]
    return first.startswith("#!") and "python" in first


def _read_blobs(root: Path, names: list[str], ref: str) -> list[SourceFile]:
    files = []
    for name in names:
        data = _git(root, "cat-file", "blob", f"{ref}:{name}")
        code = data.decode("utf-8", errors="replace")
        if _is_python(name, code):
            files.append(SourceFile(name, code))
    return files


def _names(output: bytes) -> list[str]:
    return sorted({name for name in output.decode("utf-8", errors="replace").split("\0") if name})


def staged_files(repo: Path) -> list[SourceFile]:
    """The added, copied, modified or renamed Python files in the index, with their *staged* content.

    Raises:
        UserError: ``repo`` is not in a git repository.
        VersionControlError: git fails.
    """
    root = repository_root(repo)
    names = _names(_git(root, "diff", "--cached", "--name-only", "--diff-filter=ACMR", "-z"))
    return _read_blobs(root, names, "")


def _changed_in(root: Path, revisions: list[str], tip: str) -> list[SourceFile]:
    names = _names(_git(root, "log", "--format=", "--name-only", "--diff-filter=ACMR", "-z", *revisions, "--"))
    present = [n for n in names if _git(root, "ls-tree", "--name-only", "-z", tip, "--", n).strip(b"\0")]
    return _read_blobs(root, present, tip)


def pushed_files(repo: Path, revision_range: str) -> list[SourceFile]:
    """The Python files changed by the commits in ``BASE..TIP``, with their content at ``TIP``.

    Raises:
        UserError: the range is not ``BASE..TIP`` or names no commits; ``repo`` is not in a repository.
        VersionControlError: git fails.
    """
    base, sep, tip = revision_range.partition("..")
    if not sep or tip.startswith(".") or not base:
        raise UserError(f"--pushed takes a range BASE..TIP (e.g. origin/main..HEAD), got {revision_range!r}")
    root = repository_root(repo)
    tip = tip or "HEAD"
    for ref in (base, tip):
        try:
            _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        except VersionControlError as exc:
            raise UserError(f"{ref!r} in --pushed {revision_range} is not a commit of {root}") from exc
    return _changed_in(root, [f"{base}..{tip}"], tip)


def pre_push_files(repo: Path, stdin_text: str, remote: str | None = None) -> list[SourceFile]:
    """The Python files a push changes, from the lines git's pre-push hook receives on stdin.

    Each line is ``<local ref> <local sha> <remote ref> <remote sha>``. A new
    remote branch is compared with everything already on ``remote`` (any
    remote when None); deleted refs are skipped.

    Raises:
        UserError: ``repo`` is not in a git repository.
        VersionControlError: git fails.
    """
    root = repository_root(repo)
    if remote is not None and remote not in _git(root, "remote").decode().split():
        remote = None  # pushing to a URL: compare with every remote-tracking branch
    found: dict[str, SourceFile] = {}
    for line in stdin_text.splitlines():
        parts = line.split()
        if len(parts) != 4 or set(parts[1]) <= _ZERO_SHA:
            continue
        local_sha, remote_sha = parts[1], parts[3]
        known = not set(remote_sha) <= _ZERO_SHA and _exists(root, remote_sha)
        exclude = [f"--remotes={remote}"] if remote else ["--remotes"]
        revisions = [f"{remote_sha}..{local_sha}"] if known else [local_sha, "--not", *exclude]
        for source in _changed_in(root, revisions, local_sha):
            found[source.path] = source
    return [found[name] for name in sorted(found)]


def _exists(root: Path, sha: str) -> bool:
    try:
        _git(root, "cat-file", "-e", f"{sha}^{{commit}}")
    except VersionControlError:
        return False
    return True


def files_from_paths(paths: list[Path]) -> list[SourceFile]:
    """Python files named on the command line (the pre-commit framework passes them), read from disk.

    Files that are not Python (by suffix or shebang) are skipped.

    Raises:
        UserError: a path does not exist or is not a readable file.
    """
    files = []
    for path in paths:
        try:
            code = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UserError(f"cannot read {path}: {exc.strerror or exc}") from exc
        if _is_python(str(path), code):
            files.append(SourceFile(str(path), code))
    return files
