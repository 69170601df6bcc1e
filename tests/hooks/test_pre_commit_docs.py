"""The pre-commit snippets of docs/quality-and-hooks.md, run as written by the real ``pre-commit run --all-files``.

Each snippet is taken from the page; only its ``<...>`` placeholders are filled in
(the repository's URL by this checkout's path, the commit by its ``HEAD``), so a
``rev`` that names no commit (the old ``v0.1.0``: pre-commit exits 3) fails here.

Offline: the ``repo:`` form makes pre-commit clone the commit and ``pip install .``
it into an environment of its own. pip gets no index (``PIP_NO_INDEX``), builds
without isolation, and finds debatecode's dependencies through ``PYTHONPATH`` (this
virtualenv's site-packages), so only debatecode itself is installed from the clone.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from tests.api.test_docs import FENCE

pytest.importorskip("pre_commit")

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "quality-and-hooks.md"
PLACEHOLDER = re.compile(r"<[^<>\n]+>")
SHA = re.compile(r"[0-9a-f]{40}")
EVIL = "import subprocess\n\n\ndef run(command):\n    return subprocess.call(command, shell=True)\n"
CLEAN = '"""Adds."""\n\n\ndef add(a: int, b: int) -> int:\n    """Return a + b."""\n    return a + b\n'


def _snippet(kind: str) -> str:
    """The page's pre-commit configuration of ``kind``: ``remote`` (a ``repo:`` URL) or ``local``."""
    found = {}
    for match in FENCE.finditer(PAGE.read_text(encoding="utf-8")):
        if match["info"].strip() != "yaml":
            continue
        config = yaml.safe_load(match["code"])
        if isinstance(config, dict) and "repos" in config:
            [repo] = config["repos"]
            assert [hook["id"] for hook in repo["hooks"]] == ["debatecode"]
            found["local" if repo["repo"] == "local" else "remote"] = match["code"]
    assert kind in found, f"{PAGE.name} shows no {kind} pre-commit snippet for the debatecode hook"
    return found[kind]


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A git repository with a clean file and one that bandit blocks (B602), both staged; and its environment."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "DEBATECODE_", "PRE_COMMIT"))}
    env |= {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache"),
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    path = tmp_path / "project"
    path.mkdir()
    (path / "add.py").write_text(CLEAN)
    (path / "run.py").write_text(EVIL)
    for argv in (["init", "-q"], ["add", "add.py", "run.py"]):
        subprocess.run(["git", *argv], cwd=path, env=env, check=True)
    return path, env


def _run(project: Path, env: dict[str, str], config: str) -> subprocess.CompletedProcess[str]:
    (project / ".pre-commit-config.yaml").write_text(config)
    argv = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--config", ".pre-commit-config.yaml"]
    return subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=600)


def _assert_the_hook_ran(result: subprocess.CompletedProcess[str]) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 1, output  # 1: a hook failed; pre-commit's own errors exit 3
    assert "- hook id: debatecode" in output, output
    assert re.search(r"blocked\s+run\.py", output) and "run.py:5: security B602" in output, output
    assert re.search(r"ok\s+add\.py", output), output


@pytest.mark.slow
def test_the_documented_repo_snippet_installs_the_commit_and_runs_the_hook(
    project: tuple[Path, dict[str, str]],
) -> None:
    path, env = project
    snippet = _snippet("remote")
    [entry] = yaml.safe_load(snippet)["repos"]
    assert PLACEHOLDER.fullmatch(entry["repo"]), "the repository's URL is a placeholder the user fills in"
    rev = str(entry["rev"])
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
    config = snippet.replace(entry["repo"], str(REPO))
    if PLACEHOLDER.fullmatch(rev):
        config = config.replace(rev, head.stdout.strip())
    site_packages = sysconfig.get_paths()["purelib"]
    # PIP_NO_BUILD_ISOLATION=0 is pip's spelling of --no-build-isolation (setuptools then comes from PYTHONPATH).
    env |= {"PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PYTHONPATH": site_packages}
    _assert_the_hook_ran(_run(path, env, config))
    assert SHA.fullmatch(rev) or "SHA" in rev, f"rev {rev!r}: the repository has no release tags; pin a commit SHA"


def test_the_documented_local_snippet_runs_the_installed_debatecode(project: tuple[Path, dict[str, str]]) -> None:
    path, env = project
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    _assert_the_hook_ran(_run(path, env, _snippet("local")))
