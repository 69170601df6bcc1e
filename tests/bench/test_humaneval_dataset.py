"""``bench humaneval --dataset FILE``: a problem set of one's own in HumanEval's format, scored the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli.helpers import run_cli

from debatecode.bench.humaneval.problems import dataset_name, load_problems, problem_task
from debatecode.bench.humaneval.progress import run_with_progress
from debatecode.bench.humaneval.setup import HumanEvalSetup
from debatecode.config import load_config
from debatecode.errors import UserError
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted
from debatecode.llm.types import Message

ROOT = Path(__file__).resolve().parents[2]
OWN = ROOT / "benchmarks" / "datasets" / "own-functions.jsonl"

TWICE = {
    "task_id": "Mine/0",
    "prompt": 'def twice(x: int) -> int:\n    """Double x.\n\n    >>> twice(2)\n    4\n    """\n',
    "entry_point": "twice",
    "canonical_solution": "    return 2 * x\n",
    "test": "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(-3) == -6\n",
}
SQUARE = {**TWICE, "task_id": "Mine/1", "entry_point": "square", "prompt": TWICE["prompt"].replace("twice", "square")}


def _write(path: Path, *problems: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in problems))
    return path


def test_a_dataset_is_read_in_file_order_and_its_ids_or_numbers_pick_problems(tmp_path: Path) -> None:
    path = _write(tmp_path / "mine.jsonl", SQUARE, TWICE)
    assert [p["task_id"] for p in load_problems(path=path)] == ["Mine/1", "Mine/0"]
    assert [p["task_id"] for p in load_problems(path=path, ids=["0"])] == ["Mine/0"]
    assert [p["task_id"] for p in load_problems(path=path, ids=["Mine/1", "0"])] == ["Mine/1", "Mine/0"]
    with pytest.raises(UserError, match=r"unknown mine.jsonl problem\(s\): Mine/7 \(ids run from Mine/1 to Mine/0\)"):
        load_problems(path=path, ids=["7"])
    assert dataset_name(path) == "mine" and dataset_name(None) == "HumanEval"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("", "holds no problem"),
        ('{"task_id": "a/0"}\n', r"mine.jsonl:1: a problem needs the strings .* missing or not a string: prompt, "),
        ("[1, 2]\n", "mine.jsonl:1: a problem needs"),
        (json.dumps(TWICE) + "\n{oops\n", "mine.jsonl:2: not JSON"),
        (json.dumps(TWICE) + "\n\n" + json.dumps(TWICE) + "\n", "mine.jsonl:3: the task id 'Mine/0' appears twice"),
    ],
)
def test_a_malformed_dataset_is_refused_with_the_line_and_what_is_wrong(
    tmp_path: Path, lines: str, message: str
) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(lines)
    with pytest.raises(UserError, match=message):
        load_problems(path=path)


def test_the_cli_refuses_a_missing_dataset_with_exit_2(tmp_path: Path) -> None:
    proc = run_cli("bench", "humaneval", "--dataset", "nope.jsonl", "--predictions", "canonical", cwd=tmp_path)
    assert proc.returncode == 2 and "cannot read the problem set nope.jsonl" in " ".join(proc.stderr.split())


def test_the_own_function_set_shows_its_examples_and_hides_its_checks() -> None:
    problems = load_problems(path=OWN)
    assert len(problems) == 8
    for problem in problems:
        task = problem_task(problem)
        assert task.examples, f"{problem['task_id']} has a visible example"
        assert "def check" not in (task.description or "") and "_raises" not in (task.description or "")


@pytest.mark.docker
def test_the_own_function_sets_checks_pass_its_reference_solutions_and_fail_empty_ones(
    tmp_path: Path, requires_docker: None
) -> None:
    scored = run_cli(
        "bench", "humaneval", "--dataset", str(OWN), "--predictions", "canonical", "--sandbox", "docker", cwd=tmp_path
    )
    assert scored.returncode == 0, scored.stderr
    assert "8/8 problems solved" in " ".join(scored.stdout.split())
    empty = _write(
        tmp_path / "empty.jsonl",
        *({"task_id": p["task_id"], "completion": "    return None\n"} for p in load_problems(path=OWN)),
    )
    proc = run_cli(
        "bench", "humaneval", "--dataset", str(OWN), "--predictions", str(empty), "--sandbox", "docker", cwd=tmp_path
    )
    assert proc.returncode == 0 and "0/8 problems solved" in " ".join(proc.stdout.split())


def test_a_run_on_a_dataset_is_reported_under_its_name(tmp_path: Path) -> None:
    def reply(messages: list[Message], tags: dict[str, str]) -> str:
        return "```python\ndef twice(x: int) -> int:\n    return 2 * x\n```"

    register_scripted("twice", ScriptedModel(fn=reply))
    try:
        base = load_config(
            overrides={"model": "scripted/twice", "store_url": f"sqlite:///{tmp_path / 'b.db'}"}, use_file=False
        )
        path = _write(tmp_path / "mine.jsonl", TWICE)
        setup = HumanEvalSetup(
            strategies=["single"], config=base, out=tmp_path / "out", sandbox="local", dataset=dataset_name(path)
        )
        report = run_with_progress(load_problems(path=path), setup)
    finally:
        unregister_scripted("twice")
    assert report.read_text().startswith("# mine: strategies compared")
    assert "| single | 1 | 1.000 | 1/1 |" in report.read_text()
