"""Solve mode resumes: a re-run into the same folder reuses the predictions made with the same settings.

No Docker: the calc repository's instances (``fake_grading``) are solved by
scripted models that count their calls, so a test sees exactly which instances
were solved again. The CLI test grades with the stand-in test sandbox.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from swebench.harness.utils import get_predictions_from_file
from tests.bench_swebench.fake_grading import CalcBench, FakeBuilder, FakeTestSandbox, build_bench
from tests.bench_swebench.solve_fixtures import GOOD_EDIT, config_for, scripted
from typer.testing import CliRunner

from debatecode.bench.swebench import HarnessEvent, Prediction, SWEBenchHarness, SWEBenchInstance, load_predictions
from debatecode.bench.swebench import predictions as predictions_module
from debatecode.bench.swebench.predictions import PREDICTIONS_FILE, SOLVED_KEY, ResumePlan
from debatecode.bench.swebench.solve import generate_predictions
from debatecode.cli.app import app
from debatecode.errors import ModelAuthError


@pytest.fixture
def bench(tmp_path: Path) -> CalcBench:
    return build_bench(tmp_path)


@dataclass
class Counting:
    """A scripted reply that counts its calls, and fails from call ``fail_from`` (1-based) on when set."""

    calls: int = 0
    fail_from: int | None = None
    seen: list[str] = field(default_factory=list)

    def __call__(self, messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        self.calls += 1
        if self.fail_from is not None and self.calls >= self.fail_from:
            raise ModelAuthError("the key was revoked mid-run", model="scripted")
        return GOOD_EDIT


@dataclass
class Run:
    """What one ``generate_predictions`` call returned and told its listeners."""

    predictions: list[Prediction]
    plan: ResumePlan
    events: list[tuple[str, str, str]]


async def _solve(
    bench: CalcBench,
    out: Path,
    model: str,
    instances: list[SWEBenchInstance],
    *,
    budget: int = 50_000,
    jobs: int = 1,
) -> Run:
    plans: list[ResumePlan] = []
    events: list[HarnessEvent] = []
    harness = bench.harness(out)
    try:
        predictions = await generate_predictions(
            harness,
            instances,
            config=config_for(model, out.parent, token_budget=budget),
            strategy="single",
            out=out,
            jobs=jobs,
            listener=events.append,
            on_resume=plans.append,
        )
    finally:
        await harness.aclose()
    [plan] = plans
    kinds = [(e.kind, e.instance_id, e.message) for e in events if e.kind != "step"]
    return Run(predictions=predictions, plan=plan, events=kinds)


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / PREDICTIONS_FILE).read_text().splitlines()]


def _ids(instances: list[SWEBenchInstance]) -> list[str]:
    return [instance.instance_id for instance in instances]


async def test_a_rerun_reuses_every_prediction_and_calls_no_model(bench: CalcBench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    chosen = bench.instances[:2]
    reply = Counting()
    with scripted("resume-same", reply) as model:
        first = await _solve(bench, out, model, chosen, jobs=2)
        assert reply.calls == 2 and not first.plan.reused
        records = {path.name: path.read_text() for path in (out / "solve").glob("local__calc-*.json")}
        second = await _solve(bench, out, model, chosen, jobs=2)
    assert reply.calls == 2, "no model call for an instance already solved"
    assert sorted(second.plan.reused) == _ids(chosen) and second.plan.total == 2
    assert not second.plan.replaced and not second.plan.retried
    assert second.events == [("done", i, "resumed") for i in _ids(chosen)]
    assert second.predictions == first.predictions
    assert all("return high" in (p.model_patch or "") for p in second.predictions)
    assert {path.name: path.read_text() for path in (out / "solve").glob("local__calc-*.json")} == records
    lines = _lines(out)
    assert [line["instance_id"] for line in lines] == _ids(chosen)
    marks = [line[SOLVED_KEY] for line in lines]
    assert [(mark["schema_version"], mark["status"]) for mark in marks] == [(1, "ok"), (1, "ok")]
    fingerprints = [mark["fingerprint"] for mark in marks]
    assert all(len(f) == 64 and int(f, 16) >= 0 for f in fingerprints), "SHA-256 hex digests"
    assert len(set(fingerprints)) == 2, "the instance is part of the fingerprint"
    assert [e.fingerprint for e in second.plan.reused.values()] == fingerprints


async def test_the_file_stays_what_swebench_and_the_grader_read(bench: CalcBench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    chosen = bench.instances[:2]
    with scripted("resume-format", Counting()) as model:
        run = await _solve(bench, out, model, chosen)
    path = out / PREDICTIONS_FILE
    theirs = get_predictions_from_file(str(path), "unused-dataset", "test")
    assert [(p["instance_id"], p["model_name_or_path"], p["model_patch"]) for p in theirs] == [
        (p.instance_id, p.model_name_or_path, p.model_patch) for p in run.predictions
    ]
    assert all(p["model_name_or_path"] == f"debatecode-single/{model}" for p in theirs)
    assert load_predictions(path, bench.instances) == run.predictions
    assert load_predictions(out / "solve" / "predictions.jsonl", bench.instances) == run.predictions


async def test_a_run_stopped_after_the_first_instance_solves_only_the_rest(bench: CalcBench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    chosen = bench.instances[:3]
    with scripted("resume-stops", Counting(fail_from=2)) as model, pytest.raises(ModelAuthError):
        await _solve(bench, out, model, chosen)
    [line] = _lines(out)
    assert line["instance_id"] == "local__calc-1" and "return high" in str(line["model_patch"])
    with (out / PREDICTIONS_FILE).open("a") as handle:
        handle.write('{"instance_id": "local__calc-2", "model_na')  # a kill mid-write leaves a torn line
    reply = Counting()
    with scripted("resume-stops", reply):
        run = await _solve(bench, out, model, chosen)
    assert reply.calls == 2, "only local__calc-2 and local__calc-3 are solved"
    assert list(run.plan.reused) == ["local__calc-1"] and not run.plan.replaced
    assert [e for e in run.events if e[0] == "start"] == [("start", i, "") for i in ("local__calc-2", "local__calc-3")]
    assert [line["instance_id"] for line in _lines(out)] == _ids(chosen)
    assert [p.instance_id for p in run.predictions] == _ids(chosen)


async def test_a_subset_then_the_whole_set_solves_each_instance_once(bench: CalcBench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    reply = Counting()
    with scripted("resume-subset", reply) as model:
        await _solve(bench, out, model, [bench.instances[1]])
        whole = await _solve(bench, out, model, bench.instances[:3], jobs=2)
        assert reply.calls == 3 and list(whole.plan.reused) == ["local__calc-2"]
        again = await _solve(bench, out, model, [bench.instances[0]])
    assert reply.calls == 3 and list(again.plan.reused) == ["local__calc-1"]
    assert [line["instance_id"] for line in _lines(out)] == ["local__calc-2", "local__calc-3", "local__calc-1"], (
        "lines of instances outside a run stay"
    )


async def test_another_model_or_budget_is_not_reused(bench: CalcBench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    chosen = bench.instances[:2]
    first, second = Counting(), Counting()
    with scripted("resume-model-a", first) as model_a, scripted("resume-model-b", second) as model_b:
        await _solve(bench, out, model_a, chosen)
        other = await _solve(bench, out, model_b, chosen)
        assert (first.calls, second.calls) == (2, 2)
        assert not other.plan.reused
        assert [e.prediction.model_name_or_path for e in other.plan.replaced] == [f"debatecode-single/{model_a}"] * 2
        assert {p.model_name_or_path for p in other.predictions} == {f"debatecode-single/{model_b}"}
        assert {line["model_name_or_path"] for line in _lines(out)} == {f"debatecode-single/{model_b}"}
        assert len(_lines(out)) == 2
        cheaper = await _solve(bench, out, model_b, chosen, budget=40_000)
    assert second.calls == 4, "a new budget solves again"
    assert len(cheaper.plan.replaced) == 2 and not cheaper.plan.reused and len(_lines(out)) == 2


async def test_a_prediction_whose_solve_failed_is_solved_again(bench: CalcBench, tmp_path: Path) -> None:
    out = tmp_path / "out"
    chosen = bench.instances[:2]
    reply = Counting()
    with scripted("resume-error", reply) as model:
        await _solve(bench, out, model, chosen)
        lines = _lines(out)
        lines[1][SOLVED_KEY]["status"] = "error"
        (out / PREDICTIONS_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
        run = await _solve(bench, out, model, chosen)
    assert reply.calls == 3
    assert list(run.plan.reused) == ["local__calc-1"]
    assert [e.instance_id for e in run.plan.retried] == ["local__calc-2"] and not run.plan.replaced
    assert [line[SOLVED_KEY]["status"] for line in _lines(out)] == ["ok", "ok"]


def test_the_cli_says_what_it_resumed_and_what_it_replaced(
    bench: CalcBench, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = bench.instances[2:]  # the stand-in sandbox is quickest on the last instances
    dataset = tmp_path / "instances.jsonl"
    dataset.write_text("".join(instance.model_dump_json() + "\n" for instance in chosen))

    def fake_harness(instances: list[SWEBenchInstance], **kwargs: object) -> SWEBenchHarness:
        return SWEBenchHarness(
            instances,
            builder=FakeBuilder(),
            sandbox_factory=lambda image, pool_size: FakeTestSandbox(image, bench.log),
            **kwargs,  # type: ignore[arg-type]
        )

    monkeypatch.setattr("debatecode.bench.swebench.SWEBenchHarness", fake_harness)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"

    def invoke(model: str) -> str:
        args = ["--dataset", str(dataset), "--repos-dir", str(bench.repos_dir), "--model", model]
        args += ["--strategy", "single", "--out", str(out), "--jobs", "2"]
        result = CliRunner().invoke(app, ["bench", "swebench", *args], terminal_width=400)
        assert result.exit_code == 0, result.output
        return result.output

    reply = Counting()
    with scripted("resume-cli-a", reply) as model_a, scripted("resume-cli-b", Counting()) as model_b:
        fresh = invoke(model_a)
        again = invoke(model_a)
        assert reply.calls == 2, "the second run solved nothing again"
        other = invoke(model_b)
    assert "resumed" not in fresh and "2 predictions written to" in fresh and "2/2 resolved" in fresh
    assert f"resumed 2 of 2 predictions from {out / PREDICTIONS_FILE}" in again and "replaced" not in again
    assert "2/2 resolved" in again
    assert "resumed 0 of 2 predictions" in other
    assert (
        f"replaced 2 earlier prediction(s) made with another model, strategy or settings (2 by debatecode-single/{model_a})"
        in other
    )
    assert {line["model_name_or_path"] for line in _lines(out)} == {f"debatecode-single/{model_b}"}


def test_public_names() -> None:
    assert predictions_module.__all__ == [
        "EMPTY",
        "GOLD",
        "PREDICTIONS_FILE",
        "SOLVED_KEY",
        "SOLVED_SCHEMA_VERSION",
        "Prediction",
        "ResumePlan",
        "SolvedPrediction",
        "append_solved",
        "load_predictions",
        "plan_resume",
        "read_solved",
        "rewrite_solved",
        "write_predictions",
    ]
