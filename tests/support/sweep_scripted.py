"""A short scripted sweep (examples/tasks/add.md and sum_range.md), for tests that compare or resume sweeps.

Shared by the sweep resume test, the Ray executor test and the Ray workers that
test starts (``ray_worker.py``).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from tests.support.debaters import add_debater

from debatecode.bench.sweep import SweepRun
from debatecode.llm.scripted import ScriptedModel

__all__ = ["MODEL", "TASKS", "content", "light_config_file", "sweep_model"]

REPO = Path(__file__).resolve().parents[2]
TASKS = [REPO / "examples" / "tasks" / "add.md", REPO / "examples" / "tasks" / "sum_range.md"]
MODEL = "sweep-scripted"
"""The ``scripted/<name>`` the model is registered under."""


def sweep_model() -> ScriptedModel:
    """Plays every role for add.md (and answers sum_range.md with the same, failing, code)."""
    return ScriptedModel(fn=add_debater(style_variants=False))


def light_config_file(folder: Path, store: Path, model: str = f"scripted/{MODEL}") -> Path:
    """``folder/debatecode.toml``: ``model`` (this sweep's by default), sessions in the SQLite file ``store``, a short protocol."""
    path = folder / "debatecode.toml"
    path.write_text(
        f'model = "{model}"\n'
        f'store_url = "sqlite:///{store}"\n'
        "rounds = 0\n"
        "[memory]\nenabled = false\n"
        "[participants]\ncontrarian = false\nmoonshot = false\nteacher = false\n"
        "[phases]\ndehallucination = false\nself_evolvement = false\ncritique = false\nreview = false\n"
        "optimization = false\nadversarial = false\n",
        encoding="utf-8",
    )
    return path


def content(runs: list[SweepRun]) -> list[dict[str, Any]]:
    """The runs without what names one run rather than its result (time, session id)."""
    return [{k: v for k, v in asdict(run).items() if k not in ("seconds", "session_id")} for run in runs]
