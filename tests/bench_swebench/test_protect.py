"""Protected files: what a patch may not change about how tests are collected or reported."""

from __future__ import annotations

from pathlib import Path

from debatecode.bench.swebench.protect import is_protected, restore_protected


def _tree(root: Path, files: dict[str, str]) -> Path:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


BASE = {
    "pkg/core.py": "x = 1\n",
    "tests/conftest.py": "import pytest\n",
    "tests/test_core.py": "def test_x():\n    assert True\n",
    "pyproject.toml": '[project]\nname = "pkg"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "setup.cfg": "[metadata]\nname = pkg\n\n[tool:pytest]\naddopts = -q\n",
}


def test_protected_names() -> None:
    for name in ("conftest.py", "a/b/conftest.py", "pytest.ini", "src/sitecustomize.py", "x/usercustomize.py"):
        assert is_protected(name), name
    assert is_protected("src/evil.pth") and is_protected("tox.ini") and is_protected("pyproject.toml")
    assert not is_protected("pkg/core.py") and not is_protected("tests/test_core.py")


def test_collection_files_are_put_back_and_added_ones_removed(tmp_path: Path) -> None:
    reference = _tree(tmp_path / "ref", BASE)
    tree = _tree(tmp_path / "tree", BASE)
    (tree / "tests/conftest.py").write_text("import pytest\n# force every report to pass\n")
    _tree(tree, {"conftest.py": "evil = 1\n", "src/sitecustomize.py": "evil\n", "src/x.pth": "import os\n"})
    (tree / "pkg/core.py").write_text("x = 2\n")
    restored = restore_protected(tree, reference, [])
    assert [(r.path, r.action) for r in restored] == [
        ("conftest.py", "removed"),
        ("src/sitecustomize.py", "removed"),
        ("src/x.pth", "removed"),
        ("tests/conftest.py", "restored"),
    ]
    assert (tree / "tests/conftest.py").read_text() == BASE["tests/conftest.py"]
    assert not (tree / "conftest.py").exists() and not (tree / "src/x.pth").exists()
    assert (tree / "pkg/core.py").read_text() == "x = 2\n", "the fix itself is kept"


def test_shared_config_files_are_restored_only_for_their_pytest_sections(tmp_path: Path) -> None:
    reference = _tree(tmp_path / "ref", BASE)
    tree = _tree(tmp_path / "tree", BASE)
    (tree / "pyproject.toml").write_text(BASE["pyproject.toml"].replace('name = "pkg"', 'name = "pkg2"'))
    (tree / "setup.cfg").write_text(BASE["setup.cfg"].replace("addopts = -q", "addopts = -p evil"))
    restored = restore_protected(tree, reference, [])
    assert [(r.path, r.reason) for r in restored] == [("setup.cfg", "its pytest configuration changed")]
    assert 'name = "pkg2"' in (tree / "pyproject.toml").read_text(), "a non-pytest edit stays"
    assert (tree / "setup.cfg").read_text() == BASE["setup.cfg"]


def test_test_patch_files_take_the_reference_content(tmp_path: Path) -> None:
    reference = _tree(tmp_path / "ref", {**BASE, "tests/test_new.py": "def test_new():\n    assert False\n"})
    tree = _tree(tmp_path / "tree", {**BASE, "tests/test_core.py": "def test_x():\n    pass\n"})
    restored = restore_protected(tree, reference, ["tests/test_core.py", "tests/test_new.py"])
    assert {(r.path, r.action, r.reason) for r in restored} == {
        ("tests/test_core.py", "restored", "a file of test_patch"),
        ("tests/test_new.py", "restored", "a file of test_patch"),
    }
    assert (tree / "tests/test_new.py").read_text().endswith("assert False\n")


def test_without_by_name_only_test_patch_files_are_restored(tmp_path: Path) -> None:
    reference = _tree(tmp_path / "ref", BASE)
    tree = _tree(tmp_path / "tree", {**BASE, "conftest.py": "evil = 1\n"})
    assert restore_protected(tree, reference, [], by_name=False) == []
    assert (tree / "conftest.py").exists()
