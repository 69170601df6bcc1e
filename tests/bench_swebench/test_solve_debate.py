"""Solve mode, strategy ``debate``: several authors, candidates checked by the existing tests, then a vote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.bench_swebench.solve_fixtures import (
    BREAKING_EDIT,
    GOOD_EDIT,
    MIN_EDIT,
    CalcSetup,
    FakeChecker,
    Reply,
    config_for,
    scripted,
)

from debatecode.bench.swebench.checking import CheckResult, regressions
from debatecode.bench.swebench.solve import generate_predictions
from debatecode.errors import SandboxError, SandboxUnavailable


def authors(edits: dict[str, str], votes: dict[str, str]) -> Reply:
    def reply(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        if tags["kind"] == "vote":
            return votes[tags["agent"]]
        return edits[tags["agent"]]

    return reply


async def test_candidates_that_break_existing_tests_are_out_and_the_vote_picks(calc: CalcSetup, tmp_path: Path) -> None:
    checker = FakeChecker()
    edits = {"agent-1": GOOD_EDIT, "agent-2": BREAKING_EDIT, "agent-3": MIN_EDIT}
    # Candidates 1..3 are the authors' patches; voters see only the eligible ones (agent-1's and agent-3's).
    votes = {
        "agent-1": "Candidate 2 is shorter.\nRanking: 2 > 1",
        "agent-2": "Both work; the min/max one is clearer.\nRanking: 2, 1",
        "agent-3": "I prefer the explicit branch.\nRanking: 1 > 2",
    }
    with scripted("solve-debate", authors(edits, votes)) as model:
        config = config_for(model, tmp_path, agents=3)
        [prediction] = await generate_predictions(
            calc.harness, [calc.instance], config=config, strategy="debate", out=calc.out, checker=checker
        )
    assert prediction.model_name_or_path == "debatecode-debate/scripted/solve-debate"
    assert "max(low, min(value, high))" in (prediction.model_patch or "")
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert checker.patches[0] == ""  # the baseline, then each distinct candidate
    assert len(checker.patches) == 4
    candidates = record["candidates"]
    assert candidates[1]["regressions"] == ["tests.test_ops::test_double"]
    assert candidates[0]["regressions"] == [] and candidates[2]["regressions"] == []
    assert record["chosen"] == 2
    assert [ballot["ranking"] for ballot in record["ballots"]] == [["3", "1"], ["3", "1"], ["1", "3"]]
    assert record["vote"]["winner"] == "3"
    assert record["calls"] == 6
    temperatures = {(t["agent"], t["kind"]): t["temperature"] for t in record["transcript"]}
    assert temperatures[("agent-1", "propose")] == 0.0 and temperatures[("agent-2", "propose")] == 0.7
    assert temperatures[("agent-2", "vote")] == 0.0
    vote_prompt = next(t for t in record["transcript"] if t["kind"] == "vote")["messages"][-1]["content"]
    assert "### Candidate 1" in vote_prompt and "### Candidate 2" in vote_prompt
    assert "### Candidate 3" not in vote_prompt and "value * 3" not in vote_prompt


async def test_identical_candidates_need_no_checks_and_no_vote(calc: CalcSetup, tmp_path: Path) -> None:
    checker = FakeChecker()
    with scripted("solve-same", lambda messages, tags: GOOD_EDIT) as model:
        [prediction] = await generate_predictions(
            calc.harness,
            [calc.instance],
            config=config_for(model, tmp_path, agents=3),
            strategy="debate",
            out=calc.out,
            checker=checker,
        )
    assert "if value > high:" in (prediction.model_patch or "")
    assert checker.patches == []
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert record["calls"] == 3 and record["ballots"] == [] and record["chosen"] == 0


async def test_majority_voting_asks_no_one(calc: CalcSetup, tmp_path: Path) -> None:
    edits = {"agent-1": GOOD_EDIT, "agent-2": MIN_EDIT, "agent-3": MIN_EDIT}
    with scripted("solve-majority", authors(edits, {})) as model:
        config = config_for(model, tmp_path, agents=3, convergence={"voting": "majority"})
        [prediction] = await generate_predictions(
            calc.harness, [calc.instance], config=config, strategy="debate", out=calc.out, checker=FakeChecker()
        )
    assert "max(low, min(value, high))" in (prediction.model_patch or "")
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert record["calls"] == 3 and record["vote"]["method"] == "majority"


async def test_a_checker_failure_leaves_the_candidates_unchecked(calc: CalcSetup, tmp_path: Path) -> None:
    edits = {"agent-1": GOOD_EDIT, "agent-2": MIN_EDIT}
    votes = {"agent-1": "Ranking: 1 > 2", "agent-2": "Ranking: 1 > 2"}
    with scripted("solve-nocheck", authors(edits, votes)) as model:
        [prediction] = await generate_predictions(
            calc.harness,
            [calc.instance],
            config=config_for(model, tmp_path, agents=2),
            strategy="debate",
            out=calc.out,
            checker=FakeChecker(SandboxError("image build failed")),
        )
    assert "if value > high:" in (prediction.model_patch or "")
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert "image build failed" in record["check_error"] and record["vote"]["winner"] == "1"


async def test_an_engine_that_does_not_answer_stops_the_run(calc: CalcSetup, tmp_path: Path) -> None:
    edits = {"agent-1": GOOD_EDIT, "agent-2": MIN_EDIT}
    with scripted("solve-down", authors(edits, {})) as model, pytest.raises(SandboxUnavailable):
        await generate_predictions(
            calc.harness,
            [calc.instance],
            config=config_for(model, tmp_path, agents=2),
            strategy="debate",
            out=calc.out,
            checker=FakeChecker(SandboxUnavailable("engine down", backend="docker")),
        )


def test_regressions_compare_with_the_baseline() -> None:
    baseline = CheckResult(status="failed", tests={"a": "PASSED", "b": "FAILED"})
    assert regressions(baseline, CheckResult(status="failed", tests={"a": "FAILED", "b": "FAILED"})) == ["a"]
    assert regressions(baseline, CheckResult(status="passed", tests={"a": "PASSED", "b": "PASSED"})) == []
    assert regressions(None, CheckResult(status="failed", tests={"a": "ERROR"})) == ["a"]
    assert regressions(baseline, CheckResult(status="patch_failed")) == ["<the patch does not apply>"]


async def test_authors_and_voters_take_the_roster_models(calc: CalcSetup, tmp_path: Path) -> None:
    """``models.generator`` is every author's (and voter's) model, as in the engine's roster; ``model`` goes unused."""
    edits = {"agent-1": GOOD_EDIT, "agent-2": MIN_EDIT}
    votes = {"agent-1": "Ranking: 2 > 1", "agent-2": "I vote for candidate 2."}

    def unused(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        raise AssertionError("config.model must not answer when models.generator is set")

    with (
        scripted("solve-role-default", unused) as default,
        scripted("solve-role-generator", authors(edits, votes)) as generator,
    ):
        config = config_for(default, tmp_path, agents=2, models={"generator": generator})
        [prediction] = await generate_predictions(
            calc.harness, [calc.instance], config=config, strategy="debate", out=calc.out, checker=FakeChecker()
        )
    assert prediction.model_name_or_path == f"debatecode-debate/{generator}"
    assert "max(low, min(value, high))" in (prediction.model_patch or "")
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert [candidate["model"] for candidate in record["candidates"]] == [generator, generator]
    assert {turn["model"] for turn in record["transcript"]} == {generator}
    # The engine's ballot parser: a ``Ranking:`` line, else the one vote a reply names.
    assert [ballot["ranking"] for ballot in record["ballots"]] == [["2", "1"], ["2"]]


async def test_agent_models_win_over_the_generator_model(calc: CalcSetup, tmp_path: Path) -> None:
    edits = {"agent-1": GOOD_EDIT, "agent-2": GOOD_EDIT}
    with (
        scripted("solve-het-generator", authors(edits, {})) as generator,
        scripted("solve-het-a", authors(edits, {})) as first,
        scripted("solve-het-b", authors(edits, {})) as second,
    ):
        config = config_for(
            generator, tmp_path, agents=2, models={"generator": generator}, agent_models=[first, second]
        )
        await generate_predictions(
            calc.harness, [calc.instance], config=config, strategy="debate", out=calc.out, checker=FakeChecker()
        )
    record = json.loads((calc.out / "solve" / "local__calc-1.json").read_text())
    assert [candidate["model"] for candidate in record["candidates"]] == [first, second]
