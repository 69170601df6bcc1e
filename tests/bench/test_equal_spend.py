"""Equal-spend comparisons: vote@N on sample prefixes, spend matching, the Pareto plot, McNemar at matched spend.

The integration tests use one fake HumanEval problem, a scripted model whose
drafts differ per author (``agent-<k>``, as vote sample ``k - 1`` is tagged),
and the Docker-free dummy sandbox. The search itself is tested on synthetic
spend curves, where the reachable and unreachable cases are exact.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import run_cli
from tests.support.dummy_sandbox import DummySandbox

from debatecode._api import Services, solve_async
from debatecode.bench._stats import mcnemar_exact_p, paired_test
from debatecode.bench.humaneval import completion_of, problem_task
from debatecode.bench.humaneval.run import run_humaneval_async
from debatecode.bench.humaneval.scored_session import spent_by
from debatecode.bench.humaneval.spend import SpendPoint, SpendSearch, match_spend
from debatecode.bench.humaneval.strategies import strategy_config
from debatecode.bench.humaneval.vote import read_vote_samples, vote_at
from debatecode.config import DebateConfig, load_config
from debatecode.llm.client import LLMClient
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted
from debatecode.store import open_store

PROBLEM: dict[str, Any] = {
    "task_id": "HumanEval/900",
    "entry_point": "inc",
    "prompt": 'def inc(x: int) -> int:\n    """Return x plus one.\n    >>> inc(1)\n    2\n    """\n',
    "canonical_solution": "    return x + 1\n",
    "test": "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(-5) == -4\n",
}
DRAFTS = {
    "agent-1": "    return 2\n",  # passes the visible example, fails the hidden test
    "agent-2": "    return x\n",  # fails the visible example
    "agent-3": "    return x + 1\n",
    "agent-4": "    return x + 1\n",
}
"""Sample k is drafted as ``agent-<k+1>``: vote@3 ties agents 1 and 3 on tests and takes the earlier (wrong)
one; vote@4 has two agreeing correct samples, which outvote it."""


def _code(body: str) -> str:
    return "```python\n" + PROBLEM["prompt"] + body + "```"


def _debater(calls: list[tuple[str, str]], padding: int = 0) -> Callable[[Any, dict[str, str]], str]:
    """Answers every kind; drafts as in ``DRAFTS`` (agents past 4 write the canonical solution), padded to cost more."""

    def reply(messages: Any, tags: dict[str, str]) -> str:
        kind, agent = tags["kind"], tags["agent"]
        calls.append((kind, agent))
        if kind == "draft":
            why = "I return the value the docstring asks for, because its example pins it. " * padding
            return why + "\n" + _code(DRAFTS.get(agent, PROBLEM["canonical_solution"]))
        if kind in ("moonshot", "contrast", "address_review", "defend") or kind.startswith(
            ("refine", "retry", "optimize")
        ):
            return "The docstring pins it because of the example.\n" + _code(PROBLEM["canonical_solution"])
        if kind.startswith("attack-"):
            return "```text\ninc(0)\n```"
        if kind == "review":
            return "Satisfaction: 95\nRationale: correct because every example passes.\nBlocking concerns: none"
        if kind == "vote" or kind.startswith("vote-"):
            return "The first is fine because it matches the docstring.\nRanking: 1\nVote: Candidate 1"
        if kind.startswith("reflect"):
            return "Root cause: none.\nConfidence: 0.9"
        return "Objection: none, because the example pins the behaviour."

    return reply


@pytest.fixture
def model() -> Iterator[Callable[..., str]]:
    """``model(fn)`` registers a scripted model answering with ``fn`` and returns its model string."""
    names: list[str] = []

    def register(fn: Callable[[Any, dict[str, str]], str]) -> str:
        name = f"equal-spend-{len(names)}"
        register_scripted(name, ScriptedModel(fn=fn))
        names.append(name)
        return f"scripted/{name}"

    yield register
    for name in names:
        unregister_scripted(name)


def _base(tmp_path: Path, model: str) -> DebateConfig:
    return load_config(
        overrides={
            "model": model,
            "store_url": f"sqlite:///{tmp_path / 'bench.db'}",
            "memory.enabled": False,
            "phases.adversarial": False,
            "phases.optimization": False,
            "phases.review": False,
        },
        use_file=False,
    )


def _services(config: DebateConfig) -> Services:
    return Services(LLMClient(), DummySandbox(), open_store(config.store_url))


# -- statistics ----------------------------------------------------------------------------------------


def test_mcnemar_exact_p_for_known_discordant_counts() -> None:
    assert mcnemar_exact_p(10, 2) == pytest.approx(0.0386, abs=1e-4)  # 2 * (1 + 12 + 66) / 2**12
    assert mcnemar_exact_p(2, 10) == mcnemar_exact_p(10, 2)
    first = {f"t{i}": i < 10 for i in range(12)} | {f"s{i}": True for i in range(5)}
    second = {f"t{i}": i >= 10 for i in range(12)} | {f"s{i}": True for i in range(5)}
    test = paired_test("debate", first, "vote@9", second)
    assert (test.problems, test.b, test.c) == (17, 10, 2)
    assert test.p == pytest.approx(0.03857, abs=1e-5)


# -- vote@N on a prefix ----------------------------------------------------------------------------------


def _sample(index: int, visible: int, key: str, passed: bool, tokens: int = 100) -> dict[str, Any]:
    return {
        "task_id": "HumanEval/1",
        "index": index,
        "visible": [visible, 2],
        "code_key": key,
        "completion": f"answer {key}",
        "passed": passed,
        "tokens": tokens,
        "calls": 1,
        "seconds": 1.0,
        "session_id": f"s{index}",
        "status": "completed",
    }


def test_vote_at_takes_the_most_tests_then_the_majority_then_the_earliest() -> None:
    samples = [
        _sample(0, 1, "a", False),
        _sample(1, 2, "b", False, tokens=50),
        _sample(2, 2, "c", True),
        _sample(3, 2, "c", True),
        _sample(4, 0, "", False),  # no code: never a candidate
    ]
    assert vote_at(samples, 1)["completion"] == "answer a", "the only sample wins"
    assert vote_at(samples, 2)["winner"] == 1, "more visible tests beat an earlier sample"
    assert vote_at(samples, 3)["winner"] == 1, "tied on tests and on frequency: the earliest"
    four = vote_at(samples, 4)
    assert (four["winner"], four["passed"]) == (2, True), "two agreeing samples outvote one"
    assert (four["tokens"], four["calls"], four["samples_passed"]) == (350, 4, 2), "spend sums the first N"
    assert vote_at(samples, 9)["n"] == 5, "a vote larger than the samples drawn uses them all"
    assert vote_at([_sample(0, 0, "", False)], 1)["passed"] is False


def test_vote_at_ranks_recorded_behaviour_by_agreement_within_the_top_tier() -> None:
    """Different code that behaves alike agrees; a crash agrees with nothing; the lower tier never counts."""
    samples = [
        {**_sample(0, 2, "a", False), "behaviour": ["1", "9", None]},
        {**_sample(1, 2, "b", True), "behaviour": ["1", "2", "3"]},
        {**_sample(2, 2, "c", True), "behaviour": ["1", "2", "3"]},
        {**_sample(3, 1, "d", False), "behaviour": ["1", "9", "9"]},
        {**_sample(4, 1, "e", False), "behaviour": ["1", "9", "9"]},
    ]
    five = vote_at(samples, 5)
    assert (five["winner"], five["passed"]) == (1, True), "two distinct codes that agree beat an earlier one"
    assert vote_at(samples, 2)["winner"] == 0, "agreement tied (one input each): the earliest"


def test_vote_prefix_rescoring_equals_running_vote_at_n_directly(tmp_path: Path, model: Callable[..., str]) -> None:
    calls: list[tuple[str, str]] = []
    base = _base(tmp_path, model(_debater(calls)))

    async def scenario() -> tuple[dict[str, list[dict[str, Any]]], dict[int, dict[str, Any]]]:
        async with _services(base) as services:
            await run_humaneval_async(
                [PROBLEM], config=base, strategies=["vote"], out=tmp_path / "out", samples=4, services=services
            )
            direct = {}
            for n in (3, 4):
                config = strategy_config(base, "vote", samples=n).model_copy(update={"out": tmp_path / f"direct-{n}"})
                async with LLMClient(config.llm) as llm:
                    result = await solve_async(
                        problem_task(PROBLEM), config, services=Services(llm, services.sandbox, services.store)
                    )
                spend = spent_by(services.store.turns(result.session.id))
                direct[n] = {
                    "completion": completion_of(result.code or "", PROBLEM["prompt"]),
                    "tokens": spend.tokens,
                    "calls": spend.calls,
                }
        return read_vote_samples(tmp_path / "out" / "vote-samples.jsonl"), direct

    samples, direct = asyncio.run(scenario())
    [drawn] = samples.values()
    assert [s["index"] for s in drawn] == [0, 1, 2, 3]
    assert [s["temperature"] for s in drawn] == [0.0] + [base.llm.temperature] * 3, "the first sample is greedy"
    assert [s["seed"] for s in drawn] == [base.llm.seed + k + 1 for k in range(4)], "author k's seed"
    assert all(s["tokens"] == s["prompt_tokens"] + s["completion_tokens"] > 0 for s in drawn)
    for n in (3, 4):
        prefix = vote_at(drawn, n)
        assert prefix["completion"] == direct[n]["completion"], f"vote@{n} picks what an {n}-author vote picks"
        assert (prefix["tokens"], prefix["calls"]) == (direct[n]["tokens"], direct[n]["calls"]), "and spends the same"
    assert (vote_at(drawn, 3)["passed"], vote_at(drawn, 4)["passed"]) == (False, True)
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text())
    assert (record["strategy"], record["passed"], record["samples"]) == ("vote", True, {"n": 4, "passed": 2})


# -- resuming ---------------------------------------------------------------------------------------------


class _Killed(BaseException):
    """The run is killed (like KeyboardInterrupt: not an Exception the engine would record)."""


def test_a_killed_vote_keeps_its_samples_and_draws_only_the_rest(tmp_path: Path, model: Callable[..., str]) -> None:
    first_calls: list[tuple[str, str]] = []
    plain = _debater(first_calls)

    def dies_on_the_third_draft(messages: Any, tags: dict[str, str]) -> str:
        if tags["kind"] == "draft" and sum(kind == "draft" for kind, _ in first_calls) == 2:
            raise _Killed
        return plain(messages, tags)

    out = tmp_path / "out"

    def run(config: DebateConfig) -> Any:
        async def scenario() -> Any:
            async with _services(config) as services:
                return await run_humaneval_async(
                    [PROBLEM], config=config, strategies=["vote"], out=out, samples=3, services=services
                )

        return asyncio.run(scenario())

    with pytest.raises(_Killed):
        run(_base(tmp_path, model(dies_on_the_third_draft)))
    kept = (out / "vote-samples.jsonl").read_text().splitlines()
    assert [json.loads(line)["index"] for line in kept] == [0, 1], "the finished samples are on disk"
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text().strip()

    again: list[tuple[str, str]] = []
    results = run(_base(tmp_path, model(_debater(again))))
    assert again == [("draft", "agent-3")], "only the missing sample is drawn"
    lines = (out / "vote-samples.jsonl").read_text().splitlines()
    assert lines[:2] == kept and [json.loads(line)["index"] for line in lines] == [0, 1, 2]
    [outcome] = results.outcomes
    assert outcome.samples_n == 3 and outcome.passed is False, "vote@3: agent-1 and agent-3 tie; the earlier wins"


# -- the spend search on synthetic curves ------------------------------------------------------------------


def _search(
    spend: Callable[[int], float], *, cap: int = 64, start: int = 3, saturated: int | None = None
) -> tuple[SpendSearch, list[int]]:
    """A search whose setting ``n`` spends ``spend(n)``; also returns the settings prepared, in order."""
    prepared: list[int] = []

    async def prepare(n: int) -> None:
        prepared.append(n)

    def point(n: int) -> SpendPoint:
        return SpendPoint("vote", n, {"t": n % 2 == 0}, spend(n), float(n), 1.0)

    search = SpendSearch(
        strategy="vote",
        start=start,
        cap=cap,
        cap_hint="--max-vote-n",
        prepare=prepare,
        point=point,
        available=lambda: list(range(1, max(prepared, default=0) + 1)),
        saturated=lambda n: saturated is not None and n >= saturated,
        saturation_reason="nothing more to spend",
    )
    return search, prepared


def test_the_search_lands_within_ten_percent_when_a_setting_can() -> None:
    search, prepared = _search(lambda n: 37.0 * n)
    match = asyncio.run(match_spend(search, "debate", 1000.0, {"t": True}))
    assert match.reached and match.point is not None and match.ratio is not None
    assert 0.9 <= match.ratio <= 1.1 and match.point.setting == 27 and match.note == ""
    assert len(prepared) <= 3, "the spend per sample points straight at the target"
    assert match.paired is not None and match.paired.second == "vote@27"


def test_the_search_says_why_when_no_setting_can() -> None:
    capped = asyncio.run(match_spend(_search(lambda n: 10.0 * n, cap=40)[0], "debate", 1000.0, {}))
    assert not capped.reached and capped.point is not None and capped.point.setting == 40
    assert "at the cap (--max-vote-n 40)" in capped.note and "0.40×" in capped.note

    coarse = asyncio.run(match_spend(_search(lambda n: 600.0 * n, start=1)[0], "debate", 1000.0, {}))
    assert not coarse.reached and "no setting lands within ±10%" in coarse.note
    assert "vote@1 spends 0.60×" in coarse.note and "vote@2 spends 1.20×" in coarse.note

    dear = asyncio.run(match_spend(_search(lambda n: 1500.0 * n)[0], "debate", 1000.0, {}))
    assert not dear.reached and dear.point is not None and dear.point.setting == 1
    assert "even vote@1 spends 1.50×" in dear.note

    flat = asyncio.run(match_spend(_search(lambda n: 100.0 * min(n, 4), saturated=4)[0], "debate", 1000.0, {}))
    assert not flat.reached and "nothing more to spend" in flat.note

    nothing = asyncio.run(match_spend(_search(lambda n: 1.0)[0], "debate", 0.0, {}))
    assert nothing.point is None and not nothing.reached and "spent no tokens" in nothing.note


# -- the whole run ------------------------------------------------------------------------------------------


def test_match_spend_scales_vote_to_debate_and_reports_it(tmp_path: Path, model: Callable[..., str]) -> None:
    calls: list[tuple[str, str]] = []
    base = _base(tmp_path, model(_debater(calls, padding=40)))
    out = tmp_path / "out"

    def run(max_vote_n: int) -> Any:
        async def scenario() -> Any:
            async with _services(base) as services:
                return await run_humaneval_async(
                    [PROBLEM],
                    config=base,
                    strategies=["vote", "reflexion", "debate"],
                    out=out,
                    samples=2,
                    agents=2,
                    vote_n=[1, 2],
                    match_spend="debate",
                    max_vote_n=max_vote_n,
                    services=services,
                )

        return asyncio.run(scenario())

    results = run(max_vote_n=64)
    vote, reflexion = results.spend_matches
    debate = next(o for o in results.outcomes if o.strategy == "debate")
    assert vote.strategy == "vote" and vote.reached and vote.point is not None and vote.ratio is not None
    assert 0.9 <= vote.ratio <= 1.1 and vote.target == debate.tokens
    samples = read_vote_samples(out / "vote-samples.jsonl")[PROBLEM["task_id"]]
    n = vote.point.setting
    assert len(samples) >= n > 2, "more samples were drawn to match debate's spend"
    assert vote.point.tokens == sum(s["tokens"] for s in samples[:n]), "vote@N spends its first N samples"
    assert vote.paired is not None and (vote.paired.first, vote.paired.second) == ("debate", f"vote@{n}")
    assert not reflexion.reached and "stops retrying once its visible tests pass" in reflexion.note

    report = (out / "report.md").read_text()
    table = report.split("\n\n![")[0]
    assert f"| vote@{n} (matched) | 1 |" in table and "| vote@1 | 1 |" in table and "| vote | 1 |" in table
    assert "| debate | 1 | 1.000 | 1/1 |" in table and "mean tokens spent" in table and "spend / debate" in table
    assert f"vote@{n} at {vote.ratio:.2f}×" in table and "reflexion NOT within ±10%" in table
    assert "## Equal spend" in report and "### McNemar at matched spend" in report
    assert f"| debate vs vote@{n} | {vote.ratio:.2f}× | 1 | 0 | 0 | 1.0000 |" in report
    assert (out / "plot.png").read_bytes()[:4] == b"\x89PNG"

    before = len(calls)
    (out / "plot.png").unlink()
    capped = run(max_vote_n=2)
    assert len(calls) == before, "a re-run with a lower cap re-scores what is there: no new session"
    assert not capped.spend_matches[0].reached
    assert "at the cap (--max-vote-n 2)" in (out / "report.md").read_text()
    assert (out / "plot.png").read_bytes()[:4] == b"\x89PNG", "the Pareto plot is written again"


# -- the command line ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--strategy", "vote,reflexion", "--match-spend", "debate"), "--match-spend debate needs debate among"),
        (("--strategy", "vote", "--vote-n", "3,x"), "--vote-n takes comma-separated sample counts"),
        (("--strategy", "vote", "--vote-n", "0,3"), "--vote-n sizes must be at least 1"),
    ],
)
def test_the_equal_spend_flags_refuse_what_cannot_run(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    proc = run_cli("bench", "humaneval", "--limit", "1", "--model", "scripted/none", *args, cwd=tmp_path)
    assert proc.returncode == 2 and message in " ".join(proc.stderr.split()), proc.stderr
    assert not (tmp_path / "bench-out").exists(), "nothing ran"
