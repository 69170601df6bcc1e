"""Applying a model's patch to a worktree with the swebench harness's own fallback chain.

The commands are swebench's ``GIT_APPLY_CMDS`` (``swebench.harness.run_evaluation``),
read from the installed package, so the chain follows the swebench version in use.
With swebench 5 they are, in order, each from a clean tree at ``base_commit``:

1. ``git apply --verbose``;
2. ``git apply --verbose --3way``: merges through the blobs named on the patch's
   ``index`` lines; a merge that leaves conflicts exits non-zero (and is checked
   for conflicts here too);
3. ``git apply --verbose --reject``: applies the hunks that fit and rejects the
   rest, exiting non-zero when it rejected any. It therefore only succeeds where
   step 1 already did; its partial result is discarded before the next step, as
   swebench discards it;
4. ``patch --batch --forward --fuzz=5 -p1 -i``: tolerates context lines that moved
   or changed.

When every command fails, swebench checks the tree the last one left with
``git apply --check --reverse``: a patch whose every change is now in place (some
hunks applied, the others already in ``base_commit``) counts as applied. So does
this chain (``METHOD_ALREADY_APPLIED``).

Differences from swebench's harness, each harmless to the verdict:

- the patch is applied on the host, in a git worktree whose difference from
  ``base_commit`` travels into the container as an overlay; swebench applies it
  inside the container;
- between attempts the tree is reset with ``git reset --hard`` and ``git clean
  -fdx``; swebench's ``git checkout -- . ; git clean -fd`` keeps what a failed
  ``--3way`` staged;
- ``patch`` also gets ``--no-backup-if-mismatch`` and ``--reject-file=-``, so no
  ``.orig`` or ``.rej`` files end up in the tree under test;
- git runs with ``apply.whitespace=warn`` (git's default) whatever the user's
  configuration says.

A patch that applies nowhere is ``patch failed``: the instance is not resolved
and no test runs. An empty patch applies trivially and is recorded as empty.
"""

from __future__ import annotations

import functools
import itertools
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from debatecode.bench.swebench._git import git_ok

__all__ = [
    "METHOD_ALREADY_APPLIED",
    "PATCH_EXTRA_OPTIONS",
    "PatchAttempt",
    "PatchOutcome",
    "apply_commands",
    "apply_with_fallbacks",
    "patch_paths",
]

METHOD_ALREADY_APPLIED = "git apply --check --reverse"
"""The method recorded when no command succeeded but the patch is found in place afterwards."""
PATCH_EXTRA_OPTIONS = ("--no-backup-if-mismatch", "--reject-file=-")
"""Added to swebench's ``patch`` command: no ``.orig`` backups or ``.rej`` files in the tree under test."""
_GIT_SETTINGS = ("-c", "apply.whitespace=warn")
_OUTPUT_CHARS = 2000
_DIFF_GIT = re.compile(r'^diff --git (?:"?a/(.+?)"?) (?:"?b/(.+?)"?)$', re.M)


class PatchAttempt(BaseModel):
    """One way of applying the patch, and what it said."""

    method: str
    ok: bool
    output: str = ""


class PatchOutcome(BaseModel):
    """Whether and how a patch applied."""

    empty: bool = False
    applied: bool = False
    method: str | None = None
    """The command that worked (one of ``apply_commands()``, or ``METHOD_ALREADY_APPLIED``), or None."""
    attempts: list[PatchAttempt] = Field(default_factory=list)


@functools.cache
def apply_commands() -> tuple[str, ...]:
    """swebench's ``GIT_APPLY_CMDS``: the commands its harness tries, in order (each takes the patch file last).

    Raises:
        ConfigError: swebench is not installed (the message names the extra).
    """
    from debatecode.bench.swebench.repos import require_swebench

    require_swebench()
    from swebench.harness.run_evaluation import GIT_APPLY_CMDS

    return tuple(str(command) for command in GIT_APPLY_CMDS)


def _header_path(line: str) -> str | None:
    name = line[4:].split("\t", 1)[0].strip()
    if name.startswith('"') and name.endswith('"'):
        name = name[1:-1]
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def patch_paths(patch: str) -> set[str]:
    """Every path a unified diff touches (old and new names), ``/dev/null`` excluded.

    Reads ``diff --git`` lines and ``---``/``+++`` header pairs (a ``---`` line
    directly followed by a ``+++`` line), so removed lines that start with ``--``
    are not taken for headers.
    """
    paths: set[str] = set()
    for old, new in _DIFF_GIT.findall(patch):
        paths.update((old, new))
    lines = patch.splitlines()
    for first, second in itertools.pairwise(lines):
        if first.startswith("--- ") and second.startswith("+++ "):
            for line in (first, second):
                name = _header_path(line)
                if name:
                    paths.add(name)
    return {path for path in paths if path}


def _reset(tree: Path) -> None:
    git_ok("reset", "--quiet", "--hard", "HEAD", cwd=tree)
    git_ok("clean", "-fdxq", cwd=tree)


def _conflicted(tree: Path) -> bool:
    ok, output = git_ok("diff", "--name-only", "--diff-filter=U", cwd=tree)
    return ok and bool(output.strip())


def _run_patch(argv: list[str], tree: Path) -> tuple[bool, str]:
    executable = shutil.which("patch")
    if executable is None:
        return False, "the `patch` command is not installed"
    completed = subprocess.run(
        [executable, *PATCH_EXTRA_OPTIONS, *argv[1:]],
        cwd=tree,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )
    return completed.returncode == 0, completed.stdout + completed.stderr


def _run(command: str, patch_file: Path, tree: Path) -> tuple[bool, str]:
    """Run one of swebench's commands with ``patch_file`` as its last argument, in ``tree``.

    Raises:
        VersionControlError: git is missing or timed out.
    """
    argv = [*shlex.split(command), str(patch_file)]
    if argv[0] == "git":
        ok, output = git_ok(*_GIT_SETTINGS, *argv[1:], cwd=tree)
        if ok and "--3way" in argv and _conflicted(tree):
            return False, output + "\nthe three-way merge left conflicts"
        return ok, output
    if argv[0] == "patch":
        return _run_patch(argv, tree)
    return False, f"not run: {argv[0]!r} is neither git nor patch"


def apply_with_fallbacks(tree: Path, patch: str | None) -> PatchOutcome:
    """Apply ``patch`` to the git worktree ``tree`` (clean, at the base commit) with swebench's chain above.

    On failure the tree is left clean at its base commit. On success the changes are
    in the working tree, unstaged.

    Raises:
        ConfigError: swebench is not installed.
        VersionControlError: git is missing or timed out.
    """
    if not (patch or "").strip():
        return PatchOutcome(empty=True)
    assert patch is not None
    text = patch if patch.endswith("\n") else patch + "\n"
    attempts: list[PatchAttempt] = []
    with tempfile.TemporaryDirectory(prefix="debatecode-patch-") as tmp:
        patch_file = Path(tmp) / "model.patch"
        patch_file.write_text(text, encoding="utf-8", errors="surrogateescape")
        commands = apply_commands()
        for number, command in enumerate(commands):
            if number:
                _reset(tree)
            ok, output = _run(command, patch_file, tree)
            attempts.append(PatchAttempt(method=command, ok=ok, output=output.strip()[-_OUTPUT_CHARS:]))
            if ok:
                # --3way stages what it merged; the overlay is computed from the working tree either way.
                git_ok("reset", "--quiet", cwd=tree)
                return PatchOutcome(applied=True, method=command, attempts=attempts)
        # As swebench does: the chain can leave every change in place while each command exited non-zero.
        ok, output = git_ok(*_GIT_SETTINGS, "apply", "--check", "--reverse", str(patch_file), cwd=tree)
        attempts.append(PatchAttempt(method=METHOD_ALREADY_APPLIED, ok=ok, output=output.strip()[-_OUTPUT_CHARS:]))
        if ok:
            git_ok("reset", "--quiet", cwd=tree)
            return PatchOutcome(applied=True, method=METHOD_ALREADY_APPLIED, attempts=attempts)
        _reset(tree)
    return PatchOutcome(attempts=attempts)
