"""The sessions of a HumanEval run: each run once, recorded as soon as it is scored, reused on resume.

- ``results.jsonl``: one line per (problem, strategy). The vote's line is the
  vote of the problem's first ``samples`` samples.
- ``vote-samples.jsonl``: one line per vote sample (``vote``). vote@N for any N
  up to the samples drawn is scored from these lines, with no new draw.
- ``reflexion-attempts.jsonl``: Reflexion at attempt caps other than the
  config's, run for spend matching.

A killed run loses at most the sessions it was in; the next run reads the
files and continues. Spend matching (``match``) runs after every strategy
has answered every problem, and only adds samples and Reflexion runs.

Every session is a ``WorkItem`` (``answer_pair`` or ``draw_sample`` with plain-data
arguments) run by an ``Executor``: on this event loop, or as Ray tasks. Computing
a session writes no file; its record comes back here (``_record``), which appends
it. Up to the executor's ``jobs`` sessions run at once: (problem, strategy) pairs,
and in ``draw_all`` and ``reflexion_all`` problems. A problem's vote samples are
always drawn one after the other, each one the follow-up of the last, since each
one's budget is what the earlier ones left. Lines are appended as sessions finish,
so the files' line order may differ from a serial run's; their content does not,
and everything that reads them orders by problem.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from debatecode.bench._jobs import Executor, WorkItem
from debatecode.bench.humaneval.scored_session import sample_record, strategy_record
from debatecode.bench.humaneval.setup import VOTE_SAMPLE
from debatecode.bench.humaneval.spend import SpendMatch, SpendPoint, SpendSearch, match_spend
from debatecode.bench.humaneval.vote import SAMPLES_FILE, read_vote_samples, vote_point, vote_record
from debatecode.config import DebateConfig
from debatecode.protocol.services import Services

__all__ = ["ATTEMPTS_FILE", "HumanEvalSessions", "answer_pair", "draw_sample", "read_records", "slug"]

logger = logging.getLogger(__name__)

ATTEMPTS_FILE = "reflexion-attempts.jsonl"


def slug(task_id: str) -> str:
    """``HumanEval/7`` as a folder name."""
    return re.sub(r"\W", "_", task_id)


def read_records(path: Path) -> list[dict[str, Any]]:
    """The lines of a JSONL results file, in order (none when it does not exist)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _append(path: Path, record: Mapping[str, Any]) -> None:
    # Called on the event loop's thread only, and never across an await: concurrent sessions
    # each append whole lines, one after the other.
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def _point(strategy: str, setting: int, records: Sequence[Mapping[str, Any]]) -> SpendPoint:
    count = max(1, len(records))
    return SpendPoint(
        strategy=strategy,
        setting=setting,
        passed={str(r["task_id"]): bool(r["passed"]) for r in records},
        tokens=sum(int(r["tokens"]) for r in records) / count,
        calls=sum(int(r["calls"]) for r in records) / count,
        seconds=sum(float(r["seconds"]) for r in records) / count,
    )


# -- the work of one session (plain data in, a record out; run here or in a Ray worker) ----------------


async def answer_pair(
    services: Services, config: DebateConfig, *, problem: Mapping[str, Any], strategy: str
) -> dict[str, Any]:
    """``strategy``'s session on ``problem``, scored: its ``results.jsonl`` (or attempts) line."""
    return await strategy_record(problem, strategy, config, services)


async def draw_sample(
    services: Services, config: DebateConfig, *, problem: Mapping[str, Any], index: int
) -> dict[str, Any]:
    """Vote sample ``index`` on ``problem``, scored: its ``vote-samples.jsonl`` line."""
    return await sample_record(problem, index, config, services)


@dataclass(frozen=True)
class _Note:
    """What a session's record is, for ``HumanEvalSessions._record``."""

    kind: Literal["result", "sample", "attempt"]
    task: str
    target: int = 0
    """``sample``: draw up to this many samples of ``task``."""
    vote: bool = False
    """``sample``: the draw answers the vote strategy, whose ``results.jsonl`` line follows the last sample."""


class HumanEvalSessions:
    """Runs (through ``executor``) and records the sessions of one results folder.

    ``configs`` holds each strategy's config (``strategy_config``) and, under
    ``VOTE_SAMPLE``, the vote's one-sample config. ``on_result`` gets every new
    ``results.jsonl`` line; ``on_stage`` names each session as it starts.
    ``executor.jobs`` sessions at most run at once.
    """

    def __init__(
        self,
        problems: Sequence[Mapping[str, Any]],
        configs: Mapping[str, DebateConfig],
        executor: Executor,
        out: Path,
        *,
        samples: int,
        on_result: Callable[[dict[str, Any]], None] | None = None,
        on_stage: Callable[[str], None] | None = None,
    ) -> None:
        self.executor = executor
        self.problems = [dict(p) for p in problems]
        self.tasks = [str(p["task_id"]) for p in self.problems]
        self._problem = {str(p["task_id"]): p for p in self.problems}
        self.configs = configs
        self.out = out
        self.samples = samples
        self.on_result = on_result
        self.on_stage = on_stage
        self.results_path = out / "results.jsonl"
        self.samples_path = out / SAMPLES_FILE
        self.attempts_path = out / ATTEMPTS_FILE
        self._results = {(str(r["task_id"]), str(r["strategy"])): r for r in read_records(self.results_path)}
        self._samples = read_vote_samples(self.samples_path)
        self._attempts = [r for r in read_records(self.attempts_path) if r.get("reflexion")]

    def done(self, task_id: str, strategy: str) -> bool:
        return (task_id, strategy) in self._results

    def records(self, strategy: str) -> list[dict[str, Any]]:
        """``strategy``'s ``results.jsonl`` lines for the chosen problems that have one, in problem order."""
        return [self._results[(t, strategy)] for t in self.tasks if (t, strategy) in self._results]

    def _stage(self, label: str) -> None:
        logger.debug("humaneval: %s", label)
        if self.on_stage is not None:
            self.on_stage(label)

    def _config(self, name: str, *parts: str, **update: Any) -> DebateConfig:
        config = self.configs[name]
        return config.model_copy(update={"out": self.out.joinpath("runs", *parts), **update})

    async def _run(self, items: Sequence[WorkItem]) -> None:
        await self.executor.run(items, self._record, on_start=lambda item: self._stage(item.label))

    def _record(self, item: WorkItem, record: dict[str, Any]) -> list[WorkItem]:
        """Append a finished session's record to its file; return the next vote sample it calls for, if any."""
        note: _Note = item.context
        if note.kind == "sample":
            _append(self.samples_path, record)
            self._samples[note.task].append(record)
            follow = self._next_sample(note.task, note.target, vote=note.vote)
            if follow is not None:
                return [follow]
            if note.vote:
                self._record_vote(note.task)
        elif note.kind == "attempt":
            _append(self.attempts_path, record)
            self._attempts.append(record)
        else:
            self._record_result(record)
        return []

    def _record_result(self, record: dict[str, Any]) -> None:
        _append(self.results_path, record)
        self._results[(str(record["task_id"]), str(record["strategy"]))] = record
        if self.on_result is not None:
            self.on_result(record)

    # -- strategies ---------------------------------------------------------------------------------

    async def run_pairs(self, pairs: Sequence[tuple[Mapping[str, Any], str]]) -> None:
        """Answer each (problem, strategy) pair not answered yet, appending its ``results.jsonl`` line.

        Pairs start in the order given, ``jobs`` at most at once. The vote's pair is its
        samples, drawn one after the other; a vote whose samples are all drawn already is
        recorded at once.
        """
        items: list[WorkItem] = []
        for problem, strategy in pairs:
            task = str(problem["task_id"])
            if self.done(task, strategy):
                continue
            if strategy != "vote":
                config = self._config(strategy, strategy, slug(task))
                items.append(self._session(problem, strategy, config, _Note("result", task)))
                continue
            sample = self._next_sample(task, self.samples, vote=True)
            if sample is None:
                self._record_vote(task)
            else:
                items.append(sample)
        await self._run(items)

    def _session(self, problem: Mapping[str, Any], strategy: str, config: DebateConfig, note: _Note) -> WorkItem:
        label = f"{strategy} · {note.task}"
        if note.kind == "attempt":
            label = f"reflexion@{config.reflexion.max_attempts} · {note.task}"
        return WorkItem(
            answer_pair, config, {"problem": dict(problem), "strategy": strategy}, label=label, context=note
        )

    def _record_vote(self, task: str) -> None:
        """The vote of ``task``'s first ``samples`` samples, as its ``results.jsonl`` line."""
        settings = self.configs["vote"]
        self._record_result(
            vote_record(
                self._samples.get(task, []),
                self.samples,
                {
                    "model": settings.model,
                    "agents": self.samples,
                    "budget": settings.token_budget,
                    "seed": settings.llm.seed,
                },
            )
        )

    # -- vote samples --------------------------------------------------------------------------------

    def _budget_left(self, task: str) -> int:
        spent = sum(int(s["tokens"]) for s in self._samples.get(task, []))
        return self.configs["vote"].token_budget - spent

    def _next_sample(self, task: str, n: int, *, vote: bool) -> WorkItem | None:
        """The session drawing ``task``'s next sample, while fewer than ``n`` are drawn and its vote's budget lasts."""
        drawn = self._samples.setdefault(task, [])
        if len(drawn) >= n or self._budget_left(task) <= 0:
            return None
        index = len(drawn)
        config = self._config(VOTE_SAMPLE, "vote", slug(task), f"sample-{index}", token_budget=self._budget_left(task))
        return WorkItem(
            draw_sample,
            config,
            {"problem": dict(self._problem[task]), "index": index},
            label=f"vote sample {index + 1} · {task}",
            context=_Note("sample", task, target=n, vote=vote),
        )

    def vote_complete(self, n: int) -> bool:
        """Every problem has ``n`` samples, or as many as its budget allowed."""
        return all(len(self._samples.get(t, [])) >= n or self._budget_left(t) <= 0 for t in self.tasks)

    def vote_point(self, n: int) -> SpendPoint:
        """vote@``n`` over the chosen problems, from the samples drawn."""
        return vote_point(self._samples, self.tasks, n)

    def vote_available(self) -> list[int]:
        """Every N whose vote is scorable without a new sample."""
        most = max((len(self._samples.get(t, [])) for t in self.tasks), default=0)
        return [n for n in range(1, most + 1) if self.vote_complete(n)]

    async def draw_all(self, n: int) -> None:
        """Draw every chosen problem's samples up to ``n`` (while its budget lasts), ``jobs`` problems at once."""
        items = [self._next_sample(task, n, vote=False) for task in self.tasks]
        await self._run([item for item in items if item is not None])

    # -- Reflexion at other attempt caps --------------------------------------------------------------

    def _reflexion_runs(self, task: str) -> list[dict[str, Any]]:
        runs = [r for r in self._attempts if r["task_id"] == task]
        first = self._results.get((task, "reflexion"))
        if first is not None:
            default = {"max_attempts": self.configs["reflexion"].reflexion.max_attempts, "attempts_used": None}
            runs.insert(0, {**first, "reflexion": first.get("reflexion") or default})
        return runs

    def reflexion_result(self, task: str, attempts: int) -> dict[str, Any] | None:
        """Reflexion's answer to ``task`` with at most ``attempts`` attempts, if a recorded run gives it.

        A run capped at ``attempts`` does. So does a run that stopped on its own (all
        visible tests pass, or the confidence threshold) after ``u`` attempts, below its cap,
        for every cap of at least ``u``: a different cap would not have changed it.
        """
        runs = self._reflexion_runs(task)
        exact = [r for r in runs if r["reflexion"]["max_attempts"] == attempts]
        if exact:
            return exact[0]
        for run in runs:
            used, cap = run["reflexion"]["attempts_used"], run["reflexion"]["max_attempts"]
            if used is not None and used < cap and used <= attempts:
                return run
        return None

    async def reflexion_all(self, attempts: int) -> None:
        """Run Reflexion capped at ``attempts`` on each chosen problem no recorded run answers, ``jobs`` at once."""
        base = self.configs["reflexion"]
        capped = base.reflexion.model_copy(update={"max_attempts": attempts})
        items = [
            self._session(
                problem,
                "reflexion",
                self._config("reflexion", f"reflexion@{attempts}", slug(task), reflexion=capped),
                _Note("attempt", task),
            )
            for problem, task in zip(self.problems, self.tasks, strict=True)
            if self.reflexion_result(task, attempts) is None
        ]
        await self._run(items)

    def reflexion_point(self, attempts: int) -> SpendPoint:
        """Reflexion at ``attempts`` over the chosen problems (each must have a result)."""
        found = [self.reflexion_result(t, attempts) for t in self.tasks]
        return _point("reflexion", attempts, [r for r in found if r is not None])

    def reflexion_saturated(self, attempts: int) -> bool:
        """No problem used all ``attempts``: a higher cap changes nothing."""
        for task in self.tasks:
            run = self.reflexion_result(task, attempts)
            used = run["reflexion"]["attempts_used"] if run else None
            if used is None or used >= attempts:
                return False
        return True

    def reflexion_available(self, cap: int) -> list[int]:
        return [a for a in range(1, cap + 1) if all(self.reflexion_result(t, a) is not None for t in self.tasks)]

    # -- spend matching -------------------------------------------------------------------------------

    def point(self, strategy: str) -> SpendPoint:
        """``strategy``'s ``results.jsonl`` lines over the chosen problems, as a point."""
        config = self.configs[strategy]
        settings = {"vote": self.samples, "reflexion": config.reflexion.max_attempts}
        return _point(strategy, settings.get(strategy, config.agents), self.records(strategy))

    async def match(
        self, reference: str, strategies: Sequence[str], *, max_vote_n: int, max_attempts: int
    ) -> list[SpendMatch]:
        """Vote's N and Reflexion's attempts (those in ``strategies``) matched to ``reference``'s mean spend."""
        target_point = self.point(reference)
        matches = []
        if "vote" in strategies and reference != "vote":
            available = self.vote_available()
            vote = SpendSearch(
                strategy="vote",
                start=max(available, default=self.samples),
                cap=max_vote_n,
                cap_hint="--max-vote-n",
                prepare=self.draw_all,
                point=self.vote_point,
                available=self.vote_available,
                saturated=lambda n: all(self._budget_left(t) <= 0 for t in self.tasks),
                saturation_reason="every problem's token budget is spent, so no sample can be added",
            )
            matches.append(await match_spend(vote, reference, target_point.tokens, target_point.passed))
        if "reflexion" in strategies and reference != "reflexion":
            reflexion = SpendSearch(
                strategy="reflexion",
                start=self.configs["reflexion"].reflexion.max_attempts,
                cap=max_attempts,
                cap_hint="--max-reflexion-attempts",
                prepare=self.reflexion_all,
                point=self.reflexion_point,
                available=lambda: self.reflexion_available(max_attempts),
                saturated=self.reflexion_saturated,
                saturation_reason="Reflexion stops retrying once its visible tests pass, "
                "and no problem used all its attempts",
            )
            matches.append(await match_spend(reflexion, reference, target_point.tokens, target_point.passed))
        return matches
