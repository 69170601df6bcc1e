"""Solve mode, strategy ``single``: one agent, its edits turned into the prediction's patch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.bench_swebench.solve_fixtures import GOOD_EDIT, CalcSetup, config_for, git, scripted

from debatecode.bench.swebench import checking, edits, retrieval, solve
from debatecode.bench.swebench.harness import HarnessEvent
from debatecode.bench.swebench.predictions import load_predictions
from debatecode.bench.swebench.solve import SolveOptions, generate_predictions
from debatecode.errors import ConfigError, UnknownModelError


def _applies_like_gold(setup: CalcSetup, patch: str, tmp_path: Path) -> str:
    """The patched ``calc/ops.py`` after applying ``patch`` to a fresh clone at the base commit."""
    clone = tmp_path / "check"
    subprocess.run(["git", "clone", "-q", str(setup.repo), str(clone)], check=True)
    (tmp_path / "model.diff").write_text(patch)
    git(clone, "apply", str(tmp_path / "model.diff"))
    return (clone / "calc/ops.py").read_text()


async def test_one_agent_writes_the_patch(calc: CalcSetup, tmp_path: Path) -> None:
    events: list[HarnessEvent] = []
    with scripted("solve-single", lambda messages, tags: GOOD_EDIT) as model:
        config = config_for(model, tmp_path, token_budget=50_000)
        [prediction] = await generate_predictions(
            calc.harness, [calc.instance], config=config, strategy="single", out=calc.out, listener=events.append
        )
    assert prediction.model_name_or_path == "debatecode-single/scripted/solve-single"
    assert prediction.instance_id == "local__calc-1"
    assert "if value > high:" in _applies_like_gold(calc, prediction.model_patch or "", tmp_path)
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert record["schema_version"] == 1 and record["status"] == "ok"
    assert record["calls"] == 1 and record["tokens"] > 0 and record["seconds"] >= 0
    assert record["token_budget"] == 50_000
    assert record["retrieved"][0]["path"] == "calc/ops.py"
    [turn] = record["transcript"]
    assert turn["agent"] == "agent-1" and turn["reply"] == GOOD_EDIT and turn["messages"][0]["role"] == "system"
    assert record["model_patch"] == prediction.model_patch
    assert [(e.kind, e.message) for e in events] == [
        ("start", ""),
        ("step", "retrieve"),
        ("step", "propose"),
        ("done", "ok"),
    ]
    # The predictions file is SWE-bench's format, readable by the grading side.
    [again] = load_predictions(calc.out / "solve" / "predictions.jsonl", [calc.instance])
    assert again == prediction


async def test_a_per_role_generator_model_writes_the_patch(calc: CalcSetup, tmp_path: Path) -> None:
    def unused(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        raise AssertionError("config.model must not answer when models.generator is set")

    with (
        scripted("solve-single-default", unused) as default,
        scripted("solve-single-generator", lambda messages, tags: GOOD_EDIT) as generator,
    ):
        config = config_for(default, tmp_path, models={"generator": generator})
        [prediction] = await generate_predictions(
            calc.harness, [calc.instance], config=config, strategy="single", out=calc.out
        )
    assert prediction.model_name_or_path == f"debatecode-single/{generator}"
    assert "if value > high:" in (prediction.model_patch or "")
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    [candidate] = record["candidates"]
    [turn] = record["transcript"]
    assert candidate["model"] == generator and turn["model"] == generator
    assert turn["temperature"] == 0.0  # the first author decodes greedily, as in the engine's roster


async def test_a_reply_without_edits_is_sent_back_once(calc: CalcSetup, tmp_path: Path) -> None:
    def reply(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        return GOOD_EDIT if tags["kind"] == "retry" else "The bug is in clamp; it forgets the upper bound."

    with scripted("solve-retry", reply) as model:
        [prediction] = await generate_predictions(
            calc.harness, [calc.instance], config=config_for(model, tmp_path), strategy="single", out=calc.out
        )
    assert "if value > high:" in (prediction.model_patch or "")
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert record["calls"] == 2
    [candidate] = record["candidates"]
    assert candidate["attempts"] == 2 and candidate["error"] is None
    assert "could not be used" in record["transcript"][1]["messages"][-1]["content"]


@pytest.mark.parametrize(
    "answer",
    [
        "I would rather not.",
        "calc/ops.py\n<<<<<<< SEARCH\n    return nowhere\n=======\n    return 1\n>>>>>>> REPLACE\n",
        "calc/ops.py\n<<<<<<< SEARCH\n    return value * 2\n=======\n    return value * 2\n>>>>>>> REPLACE\n",
    ],
    ids=["no-edit", "does-not-apply", "no-change"],
)
async def test_no_usable_edit_gives_an_empty_prediction(calc: CalcSetup, tmp_path: Path, answer: str) -> None:
    with scripted("solve-useless", lambda messages, tags: answer) as model:
        [prediction] = await generate_predictions(
            calc.harness, [calc.instance], config=config_for(model, tmp_path), strategy="single", out=calc.out
        )
    assert prediction.is_empty
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert record["status"] == "no_patch" and record["calls"] == 2
    assert record["candidates"][0]["error"]


async def test_the_token_budget_stops_the_instance(calc: CalcSetup, tmp_path: Path) -> None:
    with scripted("solve-budget", lambda messages, tags: "no edit here " * 50) as model:
        [prediction] = await generate_predictions(
            calc.harness,
            [calc.instance],
            config=config_for(model, tmp_path, token_budget=20),
            strategy="single",
            out=calc.out,
        )
    assert prediction.is_empty
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert record["budget_exhausted"] and record["calls"] == 1
    assert "budget" in record["candidates"][0]["error"]


async def test_a_missing_commit_is_an_error_record_not_a_crash(calc: CalcSetup, tmp_path: Path) -> None:
    broken = calc.instance.model_copy(update={"base_commit": "0" * 40})
    with scripted("solve-missing", lambda messages, tags: GOOD_EDIT) as model:
        [prediction] = await generate_predictions(
            calc.harness, [broken], config=config_for(model, tmp_path), strategy="single", out=calc.out
        )
    assert prediction.is_empty
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert record["status"] == "error" and "has no commit" in record["error"]


async def test_bad_strategy_and_model_fail_before_any_work(calc: CalcSetup, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown solve strategy 'vote'; known: single, debate"):
        await generate_predictions(
            calc.harness, [calc.instance], config=config_for("scripted/x", tmp_path), strategy="vote", out=calc.out
        )
    with pytest.raises(UnknownModelError):
        await generate_predictions(
            calc.harness,
            [calc.instance],
            config=config_for("scripted/not-registered", tmp_path),
            strategy="single",
            out=calc.out,
        )
    assert not (calc.out / "solve").exists()


async def test_options_set_the_retries_and_the_retrieval(calc: CalcSetup, tmp_path: Path) -> None:
    with scripted("solve-options", lambda messages, tags: "no edit") as model:
        await generate_predictions(
            calc.harness,
            [calc.instance],
            config=config_for(model, tmp_path),
            strategy="single",
            out=calc.out,
            options=SolveOptions(top_k=1, edit_retries=0),
        )
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert record["calls"] == 1 and [item["path"] for item in record["retrieved"]] == ["calc/ops.py"]


def test_public_names() -> None:
    assert solve.__all__ == [
        "SCHEMA_VERSION",
        "SOLVE_STRATEGIES",
        "CandidateRecord",
        "SolveOptions",
        "SolveRecord",
        "generate_predictions",
        "model_name",
    ]
    assert edits.__all__ == [
        "DiffEdit",
        "Edit",
        "EditApplyError",
        "EditError",
        "NoEditError",
        "SearchReplaceEdit",
        "apply_edits",
        "parse_edits",
        "worktree_diff",
    ]
    assert retrieval.__all__ == [
        "TEXT_SUFFIXES",
        "RetrievedFile",
        "rank_files",
        "read_repository",
        "retrieve",
        "tokenize",
    ]
    assert checking.__all__ == ["CandidateChecker", "CheckResult", "HarnessChecker", "regressions"]


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"models": {"generator": "scripted/g"}},
        {"models": {"generator": "scripted/g"}, "agent_models": ["scripted/a", "scripted/b"]},
        {"agent_models": ["scripted/a"], "llm": {"temperature": 0.3, "seed": 11}},
    ],
)
def test_solve_authors_are_the_engine_roster_authors(tmp_path: Path, overrides: dict[str, object]) -> None:
    from debatecode.protocol.roster import author_sampling, build_roster

    config = config_for("scripted/default", tmp_path, agents=3, **overrides)
    authors = [agent for agent in build_roster(config, "dpde", lambda model: "chat") if agent.role.name == "generator"]
    assert [(a.model, a.temperature, a.seed) for a in authors] == [
        (solve._author_model(config, index), *author_sampling(config, index)) for index in range(3)
    ]
