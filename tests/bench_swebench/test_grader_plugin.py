"""The in-container grader plugin, run on the host with this interpreter's pytest: its ledger and tamper checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

TESTS = """\
import pytest


def test_ok():
    assert True


def test_fails():
    assert False


@pytest.mark.skip(reason="no")
def test_skipped():
    pass


@pytest.mark.xfail(strict=True)
def test_xfails():
    assert False
"""

PATCHES_REPORTS = """\
import _pytest.reports as _reports

_original = _reports.TestReport.from_item_and_call.__func__


def _always_passed(cls, item, call):
    report = _original(cls, item, call)
    report.outcome = "passed"
    report.longrepr = None
    return report


_reports.TestReport.from_item_and_call = classmethod(_always_passed)
"""


def _run(tmp_path: Path, files: dict[str, str]) -> tuple[int, dict[str, Any], str, Path]:
    plugin_dir = tmp_path / "plugin"
    plugin_dir.mkdir()
    source = resources.files("debatecode.bench.swebench").joinpath("_grader_plugin.py").read_text()
    (plugin_dir / "debatecode_swebench_grader.py").write_text(source)
    repo = tmp_path / "repo"
    for relpath, text in files.items():
        (repo / relpath).parent.mkdir(parents=True, exist_ok=True)
        (repo / relpath).write_text(text)
    results = tmp_path / "results"
    results.mkdir()
    config = tmp_path / "grader.json"
    config.write_text(
        json.dumps(
            {
                "junit": str(results / "junit.xml"),
                "ledger": str(results / "ledger.json"),
                "repo": str(repo),
                "pythonpath": [str(repo)],
            }
        )
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(plugin_dir),
        "PYTHONDONTWRITEBYTECODE": "1",
        "DEBATECODE_GRADER_CONFIG": str(config),
    }
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "debatecode_swebench_grader", "-p", "no:cacheprovider", "-rA", "tests"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert not config.exists(), "the plugin deletes its configuration as soon as it reads it"
    assert (results / "junit.xml").is_file()
    ledger = json.loads((results / "ledger.json").read_text())
    return completed.returncode, ledger, completed.stdout, results


def test_the_ledger_records_what_each_phase_did(tmp_path: Path) -> None:
    code, ledger, _, _ = _run(tmp_path, {"tests/test_a.py": TESTS})
    assert code == 1 and ledger["exitstatus"] == 1 and ledger["tampered"] == []
    tests = ledger["tests"]
    assert tests["tests/test_a.py::test_ok"] == {"setup": "ok", "call": "ok", "teardown": "ok"}
    assert tests["tests/test_a.py::test_fails"]["call"] == "raised"
    assert tests["tests/test_a.py::test_skipped"]["setup"] == "skipped"
    assert tests["tests/test_a.py::test_xfails"]["call"] == "raised"


def test_patched_reports_fool_the_log_but_not_the_ledger(tmp_path: Path) -> None:
    files = {"tests/test_a.py": "import pkg\n" + TESTS, "pkg/__init__.py": PATCHES_REPORTS}
    code, ledger, stdout, results = _run(tmp_path, files)
    assert code == 0, "every report says passed, so pytest exits 0"
    assert "PASSED tests/test_a.py::test_fails" in stdout, "the attack works on pytest's own reports"
    assert 'name="test_fails"' in (results / "junit.xml").read_text()
    assert ledger["tests"]["tests/test_a.py::test_fails"]["call"] == "raised"
    assert any("_pytest.reports.TestReport.from_item_and_call" in reason for reason in ledger["tampered"])


def test_a_plugin_registered_from_a_repository_module_is_reported(tmp_path: Path) -> None:
    register = (
        "import gc, pytest\n\n\nclass Quiet:\n    def pytest_report_header(self):\n        return 'x'\n\n\n"
        "for config in [o for o in gc.get_objects() if isinstance(o, pytest.Config)]:\n"
        "    config.pluginmanager.register(Quiet(), 'quiet')\n"
    )
    files = {"tests/test_a.py": "import pkg\n\n\ndef test_ok():\n    pass\n", "pkg/__init__.py": register}
    code, ledger, _, _ = _run(tmp_path, files)
    assert code == 0
    assert any("registered from a repository file" in reason for reason in ledger["tampered"]), ledger
