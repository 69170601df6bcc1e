"""Solve mode: agents write the patch of each SWE-bench instance from its problem statement.

Per instance:

1. **retrieve**: rank the repository's files at ``base_commit`` for the problem
   statement (``retrieval``) and show the top ones, with a file listing;
2. **propose**: each agent (one for ``single``, ``config.agents`` for ``debate``)
   replies with edits (``edits``: SEARCH/REPLACE blocks or unified diffs), which
   are applied to a fresh worktree at ``base_commit``; the worktree's ``git diff``
   is the candidate. A reply without a usable edit is sent back once with the
   error; if it fails again, the candidate is dropped;
3. ``debate`` only, with two or more distinct candidates: **check** each one with
   the repository's existing tests in the instance sandbox (``checking``), then
   **critique and vote**: every agent sees all candidates with their test evidence
   and ranks them; the ballots are counted with ``config.convergence.voting``
   among the candidates that break the fewest existing tests.

This is a debate loop of its own, built on the same ``LLMClient`` (budget, usage,
scripted models), roster choices (``debatecode.protocol.roster``: each author's
model, temperature and seed), ballot parser (``parse_ranking``) and
``debatecode.voting`` as the protocol engine; the engine's phases work on
single-function ``Task``s and cannot take repository-level candidates.

Agents see the problem statement and the repository at ``base_commit`` only,
never ``patch``, ``test_patch``, ``FAIL_TO_PASS``/``PASS_TO_PASS`` or
``hints_text``. Each instance gets its own ``LLMClient`` with
``config.token_budget``; when the budget runs out, the phases stop and the best
candidate so far is the answer. ``<out>/solve/<instance_id>.json`` records
tokens, calls, wall time, retrieval, candidates, ballots and the transcript.

Solving resumes: ``<out>/predictions.jsonl`` gets a line as each instance
finishes, with a fingerprint of the solve settings and the instance
(``_fingerprint``). A re-run into the same ``out`` reuses each line made with
the same fingerprint and solves only the other instances
(``predictions.plan_resume``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from debatecode.bench.swebench import _solve_prompts as prompts
from debatecode.bench.swebench.checking import CandidateChecker, CheckResult, HarnessChecker, regressions
from debatecode.bench.swebench.dataset import SWEBenchInstance
from debatecode.bench.swebench.edits import EditError, apply_edits, parse_edits, worktree_diff
from debatecode.bench.swebench.harness import HarnessEvent, SWEBenchHarness
from debatecode.bench.swebench.predictions import (
    PREDICTIONS_FILE,
    Prediction,
    ResumePlan,
    SolvedPrediction,
    append_solved,
    plan_resume,
    read_solved,
    rewrite_solved,
    write_predictions,
)
from debatecode.bench.swebench.repos import RepoMirror
from debatecode.bench.swebench.retrieval import RetrievedFile, rank_files, read_repository
from debatecode.config import DebateConfig
from debatecode.errors import (
    BudgetExceeded,
    ConfigError,
    ModelAuthError,
    ModelError,
    ModelRequestsDisabled,
    ModelUnreachable,
    RunError,
    SandboxUnavailable,
    UnknownModelError,
    UserError,
)
from debatecode.llm import LLMClient, Message
from debatecode.protocol.replies import parse_ranking
from debatecode.protocol.roster import author_sampling, model_for
from debatecode.safe_paths import check_model_name, check_name, path_under
from debatecode.voting import Ballot
from debatecode.voting.registry import choose_method

__all__ = [
    "SCHEMA_VERSION",
    "SOLVE_STRATEGIES",
    "CandidateRecord",
    "SolveOptions",
    "SolveRecord",
    "generate_predictions",
    "model_name",
]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
"""Version of ``<out>/solve/<instance_id>.json``."""
SOLVE_STRATEGIES = ("single", "debate")
_FINGERPRINT_VERSION = 1
"""Changes whenever ``_fingerprint`` covers other settings, so that older predictions are solved again."""


@dataclass(frozen=True)
class SolveOptions:
    """Knobs of solve mode that are not debate settings."""

    top_k: int = 5
    """Retrieved files shown to the agents."""
    excerpt_chars: int = 6000
    """Characters of each retrieved file shown at most."""
    edit_retries: int = 1
    """How many times a reply without a usable edit is sent back before the candidate is dropped."""


_FATAL_MODEL_ERRORS = (UnknownModelError, ModelAuthError, ModelUnreachable, ModelRequestsDisabled)
_AUTHOR_ROLE = "generator"
"""Solve's authors are the engine's generators: each plans its own patch, and ``models.generator`` applies."""


class CandidateRecord(BaseModel):
    """One agent's proposal and what became of it."""

    agent: str
    model: str
    patch: str = ""
    error: str | None = None
    """Why the agent has no candidate (no usable edit, a model error, the budget)."""
    attempts: int = 0
    check: CheckResult | None = None
    regressions: list[str] = Field(default_factory=list)


class SolveRecord(BaseModel):
    """Everything one instance's solve produced: ``<out>/solve/<instance_id>.json``."""

    schema_version: int = SCHEMA_VERSION
    instance_id: str
    strategy: str
    model_name_or_path: str
    status: str = "ok"
    """``ok``, ``no_patch`` (no usable candidate) or ``error`` (the instance could not be set up)."""
    error: str | None = None
    tokens: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    seconds: float = 0.0
    token_budget: int
    budget_exhausted: bool = False
    retrieved: list[dict[str, Any]] = Field(default_factory=list)
    candidates: list[CandidateRecord] = Field(default_factory=list)
    baseline: CheckResult | None = None
    check_error: str | None = None
    ballots: list[Ballot] = Field(default_factory=list)
    vote: dict[str, Any] | None = None
    chosen: int | None = None
    """Index into ``candidates`` of the winner, or None."""
    model_patch: str = ""
    transcript: list[dict[str, Any]] = Field(default_factory=list)


def model_name(strategy: str, config: DebateConfig) -> str:
    """``model_name_or_path`` of the predictions: ``debatecode-<strategy>/<model>``, ``<model>`` the first author's."""
    return f"debatecode-{strategy}/{_author_model(config, 0)}"


def _author_model(config: DebateConfig, index: int) -> str:
    """Author ``index``'s model (from 0), as the engine's roster picks it (``debatecode.protocol.roster.model_for``)."""
    return model_for(config, _AUTHOR_ROLE, index)


def _authors(config: DebateConfig, strategy: str) -> int:
    return 1 if strategy == "single" else config.agents


def _fingerprint(
    instance: SWEBenchInstance, config: DebateConfig, strategy: str, options: SolveOptions | None = None
) -> str:
    """The SHA-256 of what decides an instance's solve: equal settings and instance, equal fingerprints.

    It covers the strategy; each author's model, temperature and seed (the roster's
    choices, so ``model``, ``models.generator``, ``agent_models``, ``agents``,
    ``llm.temperature`` and ``llm.seed`` count only as far as they change those);
    ``llm.max_tokens`` and ``llm.prompt_style``; ``token_budget``; the voting
    method (``debate`` only); the ``SolveOptions``; and every field of the instance.
    Settings that do not change a solve (store, paths, ``max_concurrency``,
    ``api_base``, jobs) do not count.
    """
    authors = []
    for index in range(_authors(config, strategy)):
        temperature, seed = author_sampling(config, index)
        authors.append({"model": _author_model(config, index), "temperature": temperature, "seed": seed})
    document = {
        "version": _FINGERPRINT_VERSION,
        "strategy": strategy,
        "authors": authors,
        "max_tokens": config.llm.max_tokens,
        "prompt_style": config.llm.prompt_style,
        "token_budget": config.token_budget,
        "voting": config.convergence.voting if strategy == "debate" else None,
        "options": asdict(options or SolveOptions()),
        "instance": instance.model_dump(mode="json"),
    }
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode("utf-8", "surrogateescape")).hexdigest()


class _InstanceSolver:
    """One instance's solve: its client (and budget), mirror, retrieval, candidates and transcript."""

    def __init__(
        self,
        instance: SWEBenchInstance,
        mirror: RepoMirror,
        config: DebateConfig,
        strategy: str,
        record: SolveRecord,
        emit: Callable[[str], None],
        options: SolveOptions,
    ) -> None:
        self.options = options
        self.instance = instance
        self.mirror = mirror
        self.config = config
        self.strategy = strategy
        self.record = record
        self.emit = emit
        self.client = LLMClient(config.llm, token_budget=config.token_budget)
        self.files: list[RetrievedFile] = []
        self.proposal: list[Message] = []

    async def call(self, model: str, messages: list[Message], tags: dict[str, str], *, index: int, sample: bool) -> str:
        # As in the engine's roster: the first author decodes greedily, the others sample with their own seed.
        temperature, seed = author_sampling(self.config, index)
        if not sample:
            temperature = 0.0
        completion = await self.client.complete(model, messages, tags=tags, temperature=temperature, seed=seed)
        self.record.transcript.append(
            {
                **tags,
                "model": model,
                "temperature": temperature,
                "messages": messages,
                "reply": completion.text,
                "tokens": completion.prompt_tokens + completion.completion_tokens,
            }
        )
        return completion.text

    def retrieve(self) -> None:
        files = read_repository(self.mirror, self.instance.base_commit)
        statement = self.instance.problem_statement
        self.files = rank_files(files, statement, k=self.options.top_k, max_excerpt_chars=self.options.excerpt_chars)
        self.record.retrieved = [
            {"path": item.path, "score": item.score, "truncated": item.truncated, "mentions": item.mentions}
            for item in self.files
        ]
        self.proposal = prompts.proposal_messages(statement, self.files, sorted(files))

    def materialize(self, reply: str, workdir: Path) -> str:
        """The diff of ``reply``'s edits applied at ``base_commit``.

        Raises:
            EditError: no usable edit, an edit that does not apply, or edits that change nothing.
        """
        edits = parse_edits(reply)
        tree = self.mirror.worktree(self.instance.base_commit, workdir)
        try:
            apply_edits(tree, edits)
            patch = worktree_diff(tree)
        finally:
            self.mirror.remove_worktree(tree)
        if not patch.strip():
            raise EditError("the edits change nothing")
        return patch

    async def propose(self, index: int, tmp: Path) -> CandidateRecord:
        agent = f"agent-{index + 1}"
        model = _author_model(self.config, index)
        candidate = CandidateRecord(agent=agent, model=model)
        messages = list(self.proposal)
        for attempt in range(self.options.edit_retries + 1):
            tags = {"agent": agent, "phase": "proposal", "round": "0", "kind": "propose" if not attempt else "retry"}
            candidate.attempts = attempt + 1
            try:
                reply = await self.call(model, messages, tags, index=index, sample=True)
            except _FATAL_MODEL_ERRORS:
                raise
            except BudgetExceeded as exc:
                self.record.budget_exhausted = True
                candidate.error = str(exc)
                return candidate
            except ModelError as exc:
                candidate.error = str(exc)
                return candidate
            try:
                candidate.patch = self.materialize(reply, tmp / f"{agent}-{attempt}")
                candidate.error = None
                return candidate
            except EditError as exc:
                logger.info("%s %s: %s", self.instance.instance_id, agent, exc)
                candidate.error = str(exc)
                messages = [*messages, *prompts.retry_message(reply, str(exc))]
        return candidate

    async def check(self, checker: CandidateChecker, distinct: list[int]) -> None:
        self.emit("tests")
        try:
            self.record.baseline = await checker.check(self.instance, "")
            for index in distinct:
                candidate = self.record.candidates[index]
                candidate.check = await checker.check(self.instance, candidate.patch)
                candidate.regressions = regressions(self.record.baseline, candidate.check)
        except SandboxUnavailable:
            raise
        except (UserError, RunError) as exc:
            logger.warning("%s: the candidates cannot be checked: %s", self.instance.instance_id, exc)
            self.record.check_error = str(exc)

    async def vote(self, eligible: list[int], counts: Counter[str]) -> int:
        """The winner among ``eligible`` (indices into the candidates, tie-break order first)."""
        candidates = self.record.candidates
        voting = self.config.convergence.voting
        if voting == "majority":
            best = max(eligible, key=lambda index: (counts[candidates[index].patch], -eligible.index(index)))
            self.record.vote = {
                "method": "majority",
                "counts": {str(i + 1): counts[candidates[i].patch] for i in eligible},
            }
            return best
        self.emit("vote")
        shown = [(candidates[i].patch, candidates[i].check, candidates[i].regressions) for i in eligible]
        messages = prompts.critique_messages(self.instance.problem_statement, self.files, shown)
        ids = [str(i + 1) for i in eligible]
        for voter in range(self.config.agents):
            agent = f"agent-{voter + 1}"
            tags = {"agent": agent, "phase": "critique", "round": "1", "kind": "vote"}
            try:
                reply = await self.call(_author_model(self.config, voter), messages, tags, index=voter, sample=False)
            except _FATAL_MODEL_ERRORS:
                raise
            except BudgetExceeded:
                self.record.budget_exhausted = True
                break
            except ModelError as exc:
                logger.info("%s %s cannot vote: %s", self.instance.instance_id, agent, exc)
                continue
            ranking = [ids[option] for option in parse_ranking(reply, len(eligible))]
            self.record.ballots.append(Ballot(voter=agent, ranking=ranking))
        result = choose_method(max(1, len(self.record.ballots)), voting).tally(ids, self.record.ballots)
        self.record.vote = result.model_dump()
        return eligible[ids.index(result.winner)]

    async def run(self, checker: CandidateChecker | None) -> str:
        """The instance's patch ("" when no candidate survived)."""
        self.emit("retrieve")
        self.retrieve()
        self.emit("propose")
        authors = _authors(self.config, self.strategy)
        with tempfile.TemporaryDirectory(prefix="debatecode-solve-") as tmp:
            limit = asyncio.Semaphore(self.config.max_concurrency)

            async def one(index: int) -> CandidateRecord:
                async with limit:
                    return await self.propose(index, Path(tmp))

            self.record.candidates = list(await asyncio.gather(*(one(i) for i in range(authors))))
        candidates = self.record.candidates
        usable = [i for i, candidate in enumerate(candidates) if candidate.patch]
        counts = Counter(candidates[i].patch for i in usable)
        distinct = [i for i in usable if candidates[i].patch not in {candidates[j].patch for j in usable if j < i}]
        if not distinct:
            return ""
        chosen = distinct[0]
        if self.strategy == "debate" and len(distinct) > 1:
            if checker is not None:
                await self.check(checker, distinct)

            def evidence(index: int) -> tuple[int, int, int]:
                check = candidates[index].check
                return (len(candidates[index].regressions), -(check.passed if check else 0), distinct.index(index))

            ordered = sorted(distinct, key=evidence)
            fewest = len(candidates[ordered[0]].regressions)
            eligible = [i for i in ordered if len(candidates[i].regressions) == fewest]
            chosen = await self.vote(eligible, counts) if len(eligible) > 1 else eligible[0]
        self.record.chosen = chosen
        return candidates[chosen].patch


async def _solve_one(
    harness: SWEBenchHarness,
    instance: SWEBenchInstance,
    config: DebateConfig,
    strategy: str,
    checker: CandidateChecker | None,
    listener: Callable[[HarnessEvent], None] | None,
    options: SolveOptions,
) -> SolveRecord:
    """Solve ``instance`` with ``strategy`` (its own client and budget) and return its record; writes no file.

    An instance that cannot be set up, or whose model fails on it, ends as a record
    with status ``error``.

    Raises:
        SandboxUnavailable: the engine does not answer (``debate`` checks).
        UnknownModelError, ModelAuthError, ModelUnreachable, ModelRequestsDisabled: the model
            cannot answer at all.
    """
    name = model_name(strategy, config)

    def emit(message: str) -> None:
        if listener is not None:
            listener(HarnessEvent("step", instance.instance_id, name, message))

    record = SolveRecord(
        instance_id=instance.instance_id, strategy=strategy, model_name_or_path=name, token_budget=config.token_budget
    )
    started = time.perf_counter()
    solver: _InstanceSolver | None = None
    try:
        mirror = harness.mirror(instance.repo)
        mirror.require_commit(instance.base_commit, field="base_commit", instance_id=instance.instance_id)
        solver = _InstanceSolver(instance, mirror, config, strategy, record, emit, options)
        record.model_patch = await solver.run(checker)
        record.status = "ok" if record.model_patch else "no_patch"
    except (SandboxUnavailable, *_FATAL_MODEL_ERRORS):
        raise
    except (UserError, RunError) as exc:
        logger.warning("%s: solving failed: %s", instance.instance_id, exc)
        record.status, record.error = "error", str(exc)
    if solver is not None:
        usage = solver.client.usage
        record.prompt_tokens, record.completion_tokens = usage.prompt_tokens, usage.completion_tokens
        record.tokens = usage.total_tokens
        record.calls = len(solver.client.calls)
    record.seconds = round(time.perf_counter() - started, 3)
    return record


async def generate_predictions(
    harness: SWEBenchHarness,
    instances: Sequence[SWEBenchInstance],
    *,
    config: DebateConfig,
    strategy: str,
    out: Path,
    listener: Callable[[HarnessEvent], None] | None = None,
    checker: CandidateChecker | None = None,
    options: SolveOptions | None = None,
    jobs: int = 1,
    on_resume: Callable[[ResumePlan], None] | None = None,
    solve_with: Callable[[SWEBenchInstance], Awaitable[SolveRecord]] | None = None,
) -> list[Prediction]:
    """Solve every instance with ``strategy`` and return one prediction each (an empty patch when none).

    Resumes: ``<out>/predictions.jsonl`` (``PREDICTIONS_FILE``) gets a line as each
    instance finishes, with its status and a fingerprint of the settings that decide a
    solve (strategy, each author's model, temperature and seed, ``token_budget``,
    the voting method, ``options``...) and of the instance. An instance whose
    earlier line has the same fingerprint, and a status other than ``error``, is not
    solved again; earlier lines of this run's instances with another fingerprint
    (another model, strategy, budget...) are dropped, and their instances solved.
    Lines of other instances stay. ``on_resume`` hears that plan (``ResumePlan``)
    before any instance is solved. When every instance is done, the file is rewritten
    in a fixed order: the other instances' lines, then this run's, in the order of
    ``instances``.

    Writes ``<out>/solve/<instance_id>.json`` per instance solved and
    ``<out>/solve/predictions.jsonl`` (this run's predictions, in SWE-bench's format
    only). ``checker`` runs the existing tests of ``debate`` candidates; by default
    the harness's sandbox (``HarnessChecker``). ``listener`` gets ``start``, ``step``
    (retrieve, propose, tests, vote) and ``done`` events; ``done`` carries the
    record's status as its message, and an instance resumed from an earlier run gets
    only ``done``, with the message ``resumed``. ``options`` sets retrieval and
    retry sizes (``SolveOptions``). ``jobs`` instances are solved at once
    (``run_bounded``, on the caller's event loop, which alone appends the lines),
    each with its own client and budget; the predictions come back in the order of
    ``instances`` whatever order they finish in. ``solve_with(instance)`` solves one
    instance and returns its record in place of solving it here (``remote.RaySolving``: a Ray task
    whose worker has its own harness and checker; ``checker`` is then unused); the
    files are written here either way.

    Raises:
        ConfigError: unknown strategy, or ``jobs`` below 1.
        UnsafeName: the model string makes a ``model_name_or_path`` that cannot name a folder.
        UnknownModelError, ModelAuthError, ModelUnreachable, ModelRequestsDisabled: the model
            cannot answer at all (every instance would fail the same way). The instances
            finished before stay in ``<out>/predictions.jsonl``.
        SandboxUnavailable: the engine does not answer (``debate`` checks).
    """
    from debatecode.bench._jobs import run_bounded

    if strategy not in SOLVE_STRATEGIES:
        raise ConfigError(f"unknown solve strategy {strategy!r}; known: {', '.join(SOLVE_STRATEGIES)}")
    from debatecode.llm import validate_model

    for model in dict.fromkeys(_author_model(config, index) for index in range(_authors(config, strategy))):
        validate_model(model)
    check_model_name(model_name(strategy, config), "the predictions' model_name_or_path")  # it names folders
    if strategy == "debate" and checker is None:
        checker = HarnessChecker(harness)
    where = out / "solve"
    where.mkdir(parents=True, exist_ok=True)
    name = model_name(strategy, config)
    chosen = options or SolveOptions()
    journal = out / PREDICTIONS_FILE
    fingerprints = {i.instance_id: _fingerprint(i, config, strategy, chosen) for i in instances}
    plan = plan_resume(read_solved(journal), fingerprints)
    # Only the lines that stand remain, so the file never holds two predictions of one instance.
    rewrite_solved(journal, [*plan.kept, *plan.reused.values()])
    if on_resume is not None:
        on_resume(plan)
    solved: dict[str, SolvedPrediction] = dict(plan.reused)
    if listener is not None:
        for instance in instances:
            if instance.instance_id in plan.reused:
                listener(HarnessEvent("done", instance.instance_id, name, "resumed"))

    async def solve_one(instance: SWEBenchInstance) -> None:
        if listener is not None:
            listener(HarnessEvent("start", instance.instance_id, name))
        if solve_with is not None:
            record = await solve_with(instance)
        else:
            record = await _solve_one(harness, instance, config, strategy, checker, listener, chosen)
        record_path = path_under(where, f"{check_name(instance.instance_id, 'instance_id')}.json", what="solve record")
        record_path.write_text(record.model_dump_json(indent=2), encoding="utf-8")
        prediction = Prediction(
            instance_id=instance.instance_id, model_name_or_path=name, model_patch=record.model_patch
        )
        entry = SolvedPrediction.of(prediction, fingerprints[instance.instance_id], record.status)
        append_solved(journal, entry)
        solved[instance.instance_id] = entry
        if listener is not None:
            listener(HarnessEvent("done", instance.instance_id, name, record.status))

    await run_bounded([i for i in instances if i.instance_id not in plan.reused], jobs, solve_one)
    ordered = [solved[instance.instance_id] for instance in instances]
    rewrite_solved(journal, [*plan.kept, *ordered])
    predictions = [entry.prediction for entry in ordered]
    write_predictions(where / "predictions.jsonl", predictions)
    return predictions
