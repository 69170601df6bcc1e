"""The host side of a grading run: the patched tree, protected, as an overlay on base_commit."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from debatecode.bench.swebench import InstanceSetupError, SWEBenchInstance
from debatecode.bench.swebench.repos import RepoMirror
from debatecode.bench.swebench.workspace import OverlayEntry, prepare_tree

from .conftest import git


def _diff(repo: Path, changes: dict[str, str]) -> str:
    for relpath, text in changes.items():
        (repo / relpath).parent.mkdir(parents=True, exist_ok=True)
        (repo / relpath).write_text(text)
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached")
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-fdq")
    return patch


@pytest.fixture
def setup(repo: Path, tmp_path: Path) -> tuple[RepoMirror, SWEBenchInstance, Path]:
    files = {
        "pkg/core.py": "def add(a, b):\n    return a - b\n",
        "tests/test_core.py": "from pkg.core import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n",
        "tests/test_other.py": "def test_other():\n    assert True\n",
    }
    for relpath, text in files.items():
        (repo / relpath).parent.mkdir(parents=True, exist_ok=True)
        (repo / relpath).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    test_patch = _diff(repo, {"tests/test_new.py": "def test_new():\n    assert False\n"})
    instance = SWEBenchInstance(
        instance_id="o__r-1",
        repo="o/r",
        base_commit=base,
        problem_statement="add subtracts",
        patch="",
        test_patch=test_patch,
        FAIL_TO_PASS=["tests/test_core.py::test_add", "tests/test_new.py::test_new"],
        PASS_TO_PASS=["tests/test_other.py::test_other"],
        version="1",
        environment_setup_commit=base,
    )
    return RepoMirror("o/r", repo, tmp_path / "mirror"), instance, repo


def _written(entries: list[OverlayEntry]) -> dict[str, str]:
    return {e.path: base64.b64decode(e.data).decode() for e in entries if e.op == "write"}


def test_the_overlay_holds_the_fix_and_test_patch(
    setup: tuple[RepoMirror, SWEBenchInstance, Path], tmp_path: Path
) -> None:
    mirror, instance, repo = setup
    fix = _diff(repo, {"pkg/core.py": "def add(a, b):\n    return a + b\n"})
    prepared = prepare_tree(mirror, instance, fix, tmp_path / "work")
    assert prepared.patch.method == "git apply --verbose" and prepared.overlay is not None
    assert set(_written(prepared.overlay.entries)) == {"pkg/core.py", "tests/test_new.py"}
    assert prepared.restored == [] and prepared.test_patch_files == ["tests/test_new.py"]


def test_graded_test_files_outside_test_patch_are_restored_too(
    setup: tuple[RepoMirror, SWEBenchInstance, Path], tmp_path: Path
) -> None:
    mirror, instance, repo = setup
    cheat = _diff(
        repo, {"tests/test_core.py": "def test_add():\n    pass\n", "tests/test_new.py": "def test_new():\n    pass\n"}
    )
    prepared = prepare_tree(mirror, instance, cheat, tmp_path / "work")
    assert prepared.overlay is not None
    assert {r.path for r in prepared.restored} == {"tests/test_core.py", "tests/test_new.py"}
    written = _written(prepared.overlay.entries)
    assert "tests/test_core.py" not in written, "back to its base_commit content: no change to send"
    assert written["tests/test_new.py"].endswith("assert False\n")


def test_solve_mode_sees_no_test_patch(setup: tuple[RepoMirror, SWEBenchInstance, Path], tmp_path: Path) -> None:
    mirror, instance, _ = setup
    prepared = prepare_tree(mirror, instance, None, tmp_path / "work", apply_test_patch=False)
    assert prepared.patch.empty and prepared.overlay is not None and prepared.overlay.entries == []


def test_a_test_patch_that_does_not_apply_is_an_instance_error(
    setup: tuple[RepoMirror, SWEBenchInstance, Path], tmp_path: Path
) -> None:
    mirror, instance, _ = setup
    broken = instance.model_copy(update={"test_patch": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"})
    with pytest.raises(InstanceSetupError, match="test_patch does not apply"):
        prepare_tree(mirror, broken, None, tmp_path / "work")
