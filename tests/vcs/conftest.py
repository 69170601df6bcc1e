"""Fixtures for the git version history tests: real repositories in tmp_path, isolated from the user's git config."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import git.cmd
import pytest

from debatecode.vcs import VersionRepository

IDENTITY_VARIABLES = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "EMAIL",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_COUNT",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
)

Git = Callable[..., str]


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME (and XDG config) pointing at an empty folder: no git identity, no global config."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in IDENTITY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def git_cli(empty_home: Path) -> Git:
    """Run the git CLI in a folder and return its stdout (fails the test on a non-zero exit)."""

    def run(cwd: Path, *args: str) -> str:
        result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"git {' '.join(args)} failed: {result.stderr}"
        return result.stdout

    return run


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    return tmp_path / "out"


@pytest.fixture
def repo(out_dir: Path, empty_home: Path) -> Iterator[VersionRepository]:
    opened = VersionRepository(out_dir)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def git_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The git subcommands GitPython starts while the test runs."""
    calls: list[str] = []
    real_popen = git.cmd.safer_popen

    def counting_popen(args: Any, *rest: Any, **kwargs: Any) -> Any:
        calls.append(next(str(arg) for arg in args[1:] if not str(arg).startswith("-")))
        return real_popen(args, *rest, **kwargs)

    monkeypatch.setattr(git.cmd, "safer_popen", counting_popen)
    yield calls
