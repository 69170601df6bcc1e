"""The HumanEval bridge: the information barrier, strategies, resumable runs, hidden scoring, pass@k."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import run_cli

from debatecode.bench._stats import mcnemar_exact_p, wilson_interval
from debatecode.bench.humaneval import completion_of, load_problems, pass_at_k, problem_task
from debatecode.bench.humaneval.progress import run_with_progress
from debatecode.bench.humaneval.setup import HumanEvalSetup
from debatecode.bench.humaneval.strategies import STRATEGIES, strategy_config
from debatecode.config import load_config
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted

PROBLEMS = {p["task_id"]: p for p in load_problems(ids=["0", "2"])}


def test_the_task_shows_the_prompt_and_its_examples_only() -> None:
    problem = PROBLEMS["HumanEval/0"]
    task = problem_task(problem)
    assert task.code_prompt == problem["prompt"] and task.entry_point == "has_close_elements"
    assert [(e.source.strip(), e.want.strip()) for e in task.examples] == [
        ("has_close_elements([1.0, 2.0, 3.0], 0.5)", "False"),
        ("has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)", "True"),
    ]
    assert task.tests == [], "the hidden test is not a visible test"
    dumped = task.model_dump_json()
    assert "def check(candidate)" not in dumped and problem["test"].strip()[:60] not in dumped


def test_wilson_interval_and_mcnemar_match_known_values() -> None:
    low, high = wilson_interval(0, 40)
    assert low == 0.0 and high == pytest.approx(0.0876, abs=1e-3)
    low, high = wilson_interval(20, 40)
    assert (low, high) == (pytest.approx(0.352, abs=1e-3), pytest.approx(0.648, abs=1e-3))
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(6, 0) == pytest.approx(2 / 64)
    assert mcnemar_exact_p(3, 5) == pytest.approx(0.7265625)


def test_pass_at_k_matches_the_closed_form() -> None:
    assert pass_at_k(5, 0, 1) == 0.0 and pass_at_k(5, 5, 1) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - 1 / 10)  # 1 - C(3,3)/C(5,3)
    assert pass_at_k(4, 3, 2) == 1.0, "fewer failures than k: always one success"
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def test_completion_strips_the_prompt_when_the_code_extends_it() -> None:
    prompt = "def f():\n"
    assert completion_of("def f():\n    return 1\n", prompt) == "    return 1\n"
    assert completion_of("import os\ndef f():\n    return 1\n", prompt) == "import os\ndef f():\n    return 1\n"


def test_every_strategy_maps_to_a_config() -> None:
    base = load_config(use_file=False)
    single = strategy_config(base, "single")
    assert single.agents == 1 and not single.phases.critique and not single.participants.moonshot
    vote = strategy_config(base, "vote", samples=4)
    assert vote.agents == 4 and vote.convergence.voting == "majority"
    assert strategy_config(base, "reflexion").strategy == "reflexion"
    debate = strategy_config(base, "debate", agents=2, budget=5000)
    assert debate.agents == 2 and debate.phases.critique and debate.token_budget == 5000
    assert all(not strategy_config(base, s).memory.wisdom for s in STRATEGIES)


def _canonical_debater(prompts: list[str]) -> Any:
    """Answers every kind; code replies are the canonical solution of the problem named in the prompt."""

    def reply(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        text = "\n".join(m["content"] for m in messages)
        prompts.append(text)
        task_id = re.search(r"HumanEval/\d+", text)
        problem = PROBLEMS[task_id.group(0)] if task_id else next(iter(PROBLEMS.values()))
        code = "```python\n" + problem["prompt"] + problem["canonical_solution"] + "```"
        kind = tags["kind"]
        if kind in ("draft", "moonshot", "contrast", "address_review", "defend") or kind.startswith(
            ("refine", "retry", "optimize")
        ):
            return "I follow the docstring because the examples pin the behaviour.\n" + code
        if kind.startswith("attack-"):
            return "```text\n" + problem["entry_point"] + "([])\n```"
        if kind == "review":
            return "Satisfaction: 95\nRationale: correct because every example passes.\nBlocking concerns: none"
        if kind in ("vote",) or kind.startswith("vote-"):
            return "The first is fine because it matches the docstring.\nRanking: 1\nVote: Candidate 1"
        return "Objection: none, because the examples pin the behaviour."

    return reply


def test_hidden_tests_never_reach_an_agent_and_runs_resume(tmp_path: Path) -> None:
    prompts: list[str] = []
    register_scripted("canonical", ScriptedModel(fn=_canonical_debater(prompts)))
    try:
        base = load_config(
            overrides={
                "model": "scripted/canonical",
                "store_url": f"sqlite:///{tmp_path / 'bench.db'}",
                "memory.embedder": "hashing",
                "phases.adversarial": False,
                "phases.optimization": False,
            },
            use_file=False,
        )
        setup = HumanEvalSetup(
            strategies=list(STRATEGIES), config=base, out=tmp_path / "out", samples=2, agents=2, sandbox="local"
        )
        report = run_with_progress(list(PROBLEMS.values()), setup)
        asked = len(prompts)
        assert asked > 0
        for problem in PROBLEMS.values():
            hidden_lines = [line.strip() for line in problem["test"].splitlines() if line.strip().startswith("assert")]
            for prompt in prompts:
                assert "def check(candidate)" not in prompt and "METADATA" not in prompt
                assert not any(line in prompt for line in hidden_lines), "a hidden assertion reached a prompt"

        records = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
        assert {(r["task_id"], r["strategy"]) for r in records} == {(t, s) for t in PROBLEMS for s in STRATEGIES}
        assert all(r["passed"] for r in records), "the canonical solutions pass the hidden tests"
        assert all(r["tokens"] > 0 and r["calls"] >= 1 for r in records)
        vote = [r for r in records if r["strategy"] == "vote"]
        assert all(r["samples"] == {"n": 2, "passed": 2} for r in vote)
        text = report.read_text()
        for strategy in STRATEGIES:
            assert f"| {strategy} | 2 | 1.000 | 2/2 |" in text
        assert "| debate | 2 | 0 | 0 | 1.000 |" in text, "the paired comparison against vote"
        sample = json.loads((tmp_path / "out" / "samples-debate.jsonl").read_text().splitlines()[0])
        assert set(sample) == {"task_id", "completion"}
        assert (tmp_path / "out" / "plot.png").read_bytes()[:4] == b"\x89PNG"

        run_with_progress(list(PROBLEMS.values()), setup)
        assert len(prompts) == asked, "a finished run is resumed, not repeated"
        assert len((tmp_path / "out" / "results.jsonl").read_text().splitlines()) == len(records)
    finally:
        unregister_scripted("canonical")


@pytest.mark.docker
def test_predictions_canonical_score_all_and_empty_none(tmp_path: Path, requires_docker: None) -> None:
    exported = run_cli("bench", "humaneval", "--export-canonical", "canon.jsonl", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    scored = run_cli("bench", "humaneval", "--predictions", "canon.jsonl", "--sandbox", "docker", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert "164/164 problems solved" in " ".join(scored.stdout.split())
    rows = [json.loads(line) for line in (tmp_path / "canon.jsonl").read_text().splitlines()]
    (tmp_path / "empty.jsonl").write_text(
        "".join(json.dumps({"task_id": r["task_id"], "completion": ""}) + "\n" for r in rows)
    )
    empty = run_cli("bench", "humaneval", "--predictions", "empty.jsonl", "--sandbox", "docker", cwd=tmp_path)
    assert empty.returncode == 0 and "0/164 problems solved" in " ".join(empty.stdout.split())


def test_a_malformed_predictions_file_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"task_id": "HumanEval/0", "completion": ""}\nnot json\n')
    proc = run_cli("bench", "humaneval", "--predictions", "bad.jsonl", "--sandbox", "local", cwd=tmp_path)
    assert proc.returncode == 2 and "bad.jsonl:2" in proc.stderr
