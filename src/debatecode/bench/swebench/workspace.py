"""The host side of a grading run: the patched tree, made safe, as an overlay on the instance image.

``prepare_tree`` takes a worktree at ``base_commit``, applies the model's patch
(``patching``), restores the protected files from the reference tree
(``base_commit`` + ``test_patch``; ``protect``), and returns the difference
from ``base_commit`` as an ``Overlay``: the files to write, link or delete in the
container's copy of the repository, which the instance image holds at
``base_commit``. Only the overlay travels to the sandbox.
"""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from debatecode.bench.swebench._git import git, git_ok
from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.errors import InstanceSetupError
from debatecode.bench.swebench.patching import PatchOutcome, apply_with_fallbacks, patch_paths
from debatecode.bench.swebench.protect import RestoredFile, restore_protected
from debatecode.bench.swebench.repos import RepoMirror

__all__ = ["MAX_OVERLAY_BYTES", "Overlay", "OverlayEntry", "PreparedTree", "compute_overlay", "prepare_tree"]

MAX_OVERLAY_BYTES = 1_200_000
"""An overlay above this (encoded) does not fit a sandbox job's payload."""


class OverlayEntry(BaseModel):
    """One change to the repository copy in the container."""

    path: str
    op: Literal["write", "symlink", "delete"]
    data: str = ""
    """Base64 of the file (``write``) or the link target (``symlink``)."""
    mode: int = 0o644


class Overlay(BaseModel):
    """Everything that differs from ``base_commit``."""

    entries: list[OverlayEntry] = Field(default_factory=list)

    def encoded_size(self) -> int:
        """Bytes of the overlay as JSON."""
        return len(self.model_dump_json())

    @property
    def paths(self) -> list[str]:
        """The changed paths."""
        return [entry.path for entry in self.entries]


class PreparedTree(BaseModel):
    """The model's patch applied and made safe; ``overlay`` is None when the patch did not apply."""

    patch: PatchOutcome
    restored: list[RestoredFile] = Field(default_factory=list)
    """Protected files the model's patch had changed, put back as in the reference tree."""
    test_patch_files: list[str] = Field(default_factory=list)
    """The files ``test_patch`` wrote (taken from the reference tree)."""
    overlay: Overlay | None = None


def compute_overlay(tree: Path) -> Overlay:
    """The changes of the worktree ``tree`` against its ``HEAD`` (ignored files included).

    Raises:
        VersionControlError: git failed.
    """
    git("add", "--all", "--force", ".", cwd=tree)
    try:
        listing = git("diff", "--cached", "--no-renames", "--name-status", "-z", "HEAD", cwd=tree)
    finally:
        git_ok("reset", "--quiet", cwd=tree)
    fields = [field for field in listing.decode("utf-8", "surrogateescape").split("\0") if field]
    entries: list[OverlayEntry] = []
    for status, relpath in zip(fields[0::2], fields[1::2], strict=True):
        path = tree / relpath
        if status.startswith("D") or not os.path.lexists(path):
            entries.append(OverlayEntry(path=relpath, op="delete"))
        elif path.is_symlink():
            target = os.readlink(path).encode("utf-8", "surrogateescape")
            entries.append(OverlayEntry(path=relpath, op="symlink", data=base64.b64encode(target).decode()))
        else:
            mode = 0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644
            data = base64.b64encode(path.read_bytes()).decode()
            entries.append(OverlayEntry(path=relpath, op="write", data=data, mode=mode))
    return Overlay(entries=entries)


def prepare_tree(
    mirror: RepoMirror,
    instance: SWEBenchInstance,
    model_patch: str | None,
    workdir: Path,
    *,
    apply_test_patch: bool = True,
    protect: bool = True,
) -> PreparedTree:
    """Apply ``model_patch`` at the instance's base commit, restore protected files, and compute the overlay.

    The files of ``test_patch`` and the files holding FAIL_TO_PASS / PASS_TO_PASS tests
    take their reference content. ``apply_test_patch=False`` makes the reference tree
    ``base_commit`` alone and protects no test file by path (solve mode runs the
    repository's existing tests). ``protect=False`` restores only the
    files of ``test_patch`` (for tests that show what the protection stops).

    Raises:
        InstanceSetupError: ``test_patch`` does not apply to ``base_commit``, or the patched
            files are too large to send to the sandbox.
        VersionControlError: git failed.
    """
    tree = mirror.worktree(instance.base_commit, workdir / "tree")
    reference = mirror.worktree(instance.base_commit, workdir / "reference")
    try:
        test_paths: set[str] = set()
        if apply_test_patch and instance.test_patch.strip():
            text = instance.test_patch if instance.test_patch.endswith("\n") else instance.test_patch + "\n"
            ok, output = git_ok("apply", "--whitespace=nowarn", "-", cwd=reference, stdin=text.encode())
            if not ok:
                raise InstanceSetupError(
                    instance.instance_id, f"its test_patch does not apply to base_commit: {output.strip()[-500:]}"
                )
            test_paths = patch_paths(instance.test_patch)
        if apply_test_patch:
            # The files holding the graded tests are the reference's too, even those test_patch leaves alone:
            # a patch that edits a FAIL_TO_PASS test into passing has fixed nothing.
            test_paths |= {test.split("::", 1)[0] for test in instance.tests if test.split("::", 1)[0].endswith(".py")}
        outcome = apply_with_fallbacks(tree, model_patch)
        if not outcome.applied and not outcome.empty:
            return PreparedTree(patch=outcome)
        changed_by_model = set(compute_overlay(tree).paths)
        restored = restore_protected(tree, reference, test_paths, by_name=protect)
        overlay = compute_overlay(tree)
        size = overlay.encoded_size()
        if size > MAX_OVERLAY_BYTES:
            raise InstanceSetupError(
                instance.instance_id,
                f"the patched files take {size / 1e6:.1f} MB encoded; at most {MAX_OVERLAY_BYTES / 1e6:.1f} MB "
                "can be sent to the sandbox",
            )
        return PreparedTree(
            patch=outcome,
            restored=[item for item in restored if item.path in changed_by_model],
            test_patch_files=sorted(item.path for item in restored if item.path not in changed_by_model),
            overlay=overlay,
        )
    finally:
        mirror.remove_worktree(tree)
        mirror.remove_worktree(reference)
