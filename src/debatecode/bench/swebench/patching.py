"""Applying a model's patch to a worktree, with fallbacks, and recording which one worked.

In order, each from a clean tree at ``base_commit``:

1. ``git apply``;
2. ``git apply --3way``: merges through the blobs named on the patch's ``index``
   lines, so a patch made against a nearby commit still applies; a merge that
   leaves conflicts counts as a failure;
3. ``patch --batch --forward --fuzz=N -p1``: tolerates context lines that moved
   or changed (checked with ``--dry-run`` first, so a half-applied patch never stays).

A patch that applies nowhere is ``patch failed``: the instance is not resolved
and no test runs. An empty patch applies trivially and is recorded as empty.
"""

from __future__ import annotations

import itertools
import re
import shutil
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from debatecode.bench.swebench._git import git_ok

__all__ = ["METHODS", "PatchAttempt", "PatchOutcome", "apply_with_fallbacks", "patch_paths"]

METHODS = ("git apply", "git apply --3way", "patch --fuzz")
FUZZ = 3
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
    """The method that worked (one of ``METHODS``), or None."""
    attempts: list[PatchAttempt] = Field(default_factory=list)


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


def _patch_command(tree: Path, patch_file: Path, *, dry_run: bool) -> tuple[bool, str]:
    import subprocess

    executable = shutil.which("patch")
    if executable is None:
        return False, "the `patch` command is not installed"
    argv = [executable, "--batch", "--forward", f"--fuzz={FUZZ}", "-p1", "--no-backup-if-mismatch", "--reject-file=-"]
    if dry_run:
        argv.append("--dry-run")
    completed = subprocess.run(
        [*argv, "-i", str(patch_file)], cwd=tree, capture_output=True, text=True, errors="replace", check=False
    )
    return completed.returncode == 0, completed.stdout + completed.stderr


def _conflicted(tree: Path) -> bool:
    ok, output = git_ok("diff", "--name-only", "--diff-filter=U", cwd=tree)
    return ok and bool(output.strip())


def apply_with_fallbacks(tree: Path, patch: str | None) -> PatchOutcome:
    """Apply ``patch`` to the git worktree ``tree`` (clean, at the base commit) with the fallbacks above.

    On failure the tree is left clean at its base commit.

    Raises:
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
        for method in METHODS:
            if method == "git apply":
                ok, output = git_ok("apply", "--verbose", "--whitespace=nowarn", str(patch_file), cwd=tree)
            elif method == "git apply --3way":
                ok, output = git_ok("apply", "--verbose", "--3way", "--whitespace=nowarn", str(patch_file), cwd=tree)
                if ok and _conflicted(tree):
                    ok, output = False, output + "\nthe three-way merge left conflicts"
            else:
                ok, output = _patch_command(tree, patch_file, dry_run=True)
                if ok:
                    ok, output = _patch_command(tree, patch_file, dry_run=False)
            attempts.append(PatchAttempt(method=method, ok=ok, output=output.strip()[-_OUTPUT_CHARS:]))
            if ok:
                # --3way stages what it merged; the overlay is computed from the working tree either way.
                git_ok("reset", "--quiet", cwd=tree)
                return PatchOutcome(applied=True, method=method, attempts=attempts)
            _reset(tree)
    return PatchOutcome(attempts=attempts)
