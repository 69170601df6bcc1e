"""The public surface is small, pinned, and lazy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import debatecode

REPO = Path(__file__).resolve().parents[1]


def test_public_names_are_pinned() -> None:
    assert debatecode.__all__ == [
        "BudgetExceeded",
        "ConfigError",
        "DebateConfig",
        "DebateResult",
        "DebatecodeError",
        "ModelError",
        "SandboxError",
        "Task",
        "TaskError",
        "load_config",
        "load_task",
        "solve",
        "solve_async",
    ]
    for name in debatecode.__all__:
        assert getattr(debatecode, name) is not None


def test_import_is_light() -> None:
    code = "import sys, debatecode; print(sorted(m for m in ('litellm', 'docker', 'sqlalchemy', 'git', 'jinja2') if m in sys.modules))"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
    )


def test_configuration_reference_is_up_to_date() -> None:
    from debatecode.config import config_reference_markdown

    on_disk = (REPO / "docs" / "configuration.md").read_text()
    assert on_disk.strip() == config_reference_markdown().strip(), (
        "regenerate: python -m debatecode.config > docs/configuration.md"
    )
