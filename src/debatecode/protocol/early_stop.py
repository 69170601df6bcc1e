"""Early stop: skip the debate when independent candidates already pass and agree.

A debate earns its tokens where candidates disagree. When a quorum of the
authors' candidates pass every visible test *and* give the same results on
every generated input (``execution/inputs.py``: the task's own calls, nudged
copies of them, hypothesis draws from the signature and the examples, and the
edge cases the text names), there is nothing left for the debate to settle, so the session goes straight to the final vote. Disagreement on a
probe is evidence that at least one candidate is wrong, and the debate runs.

The probe run is a journaled tool turn, so a resumed session decides the same way.
"""

from __future__ import annotations

import logging

from debatecode.execution.inputs import generated_inputs
from debatecode.protocol.journal import turn_key
from debatecode.protocol.probe_turns import probe_codes, probe_turn
from debatecode.protocol.run import DebateRun
from debatecode.protocol.settings import ConvergenceSettings
from debatecode.protocol.state import Candidate
from debatecode.store.records import TurnRecord
from debatecode.task import Task

__all__ = ["agreement_probes", "early_agreement", "quorum"]

logger = logging.getLogger(__name__)

_PHASE = "early_stop"


def quorum(authors: int) -> int:
    """Candidates that must pass and agree: a strict majority of the authors (all of them when there are two)."""
    return authors // 2 + 1


def agreement_probes(task: Task, limit: int) -> list[str]:
    """The generated inputs the passing candidates must agree on, at most ``limit``.

    ``execution.inputs.generated_inputs``: the visible calls first (every passing candidate
    agrees on them by construction, so they cost little and guard against a prober that
    reports nothing), then nudged copies of them, hypothesis draws from the signature and the
    examples, and the edge cases the task's text names, taken in turn.
    """
    return generated_inputs(task, limit=limit, seed=0)


async def early_agreement(run: DebateRun, settings: ConvergenceSettings) -> str | None:
    """Why the debate can stop before its loop, or None when it must run.

    Needs ``settings.early_stop`` on, at least ``quorum`` authors' candidates passing every visible
    test, and those candidates giving identical results on every probe.
    """
    authors = [a.id for a in run.authors()]
    if not settings.early_stop or not authors:
        return None
    passing = [
        c for agent_id in authors if (c := run.state.candidates.get(agent_id)) is not None and c.all_visible_pass()
    ]
    if len(passing) < quorum(len(authors)):
        return None
    if run.state.stop_reason.startswith("early stop"):
        return run.state.stop_reason
    calls = agreement_probes(run.task, settings.agreement_probes)
    # One key per check, in order, so that a resume replays each decision where it was taken.
    run.state.agreement_checks += 1
    kind = f"agreement-{run.state.agreement_checks}"
    turn = await run.journal.replay_or_do(
        turn_key(0, _PHASE, "executor", kind), lambda: _probe_turn(run, passing, calls, kind)
    )
    turn = await run.record(turn)
    if not turn.metadata.get("agree"):
        return None
    names = ", ".join(c.agent_id for c in passing)
    agreement = f"agree on {len(calls)} probe inputs" if calls else "no probe inputs could be derived from the task"
    return (
        f"early stop: {len(passing)} of {len(authors)} authors' candidates ({names}) pass every visible test"
        f" and {agreement}"
    )


async def _probe_turn(run: DebateRun, passing: list[Candidate], calls: list[str], kind: str) -> TurnRecord:
    results = await probe_codes(run, {candidate.agent_id: candidate.code or "" for candidate in passing}, calls)
    first = next(iter(results.values()))
    disagreements = [
        call
        for index, call in enumerate(calls)
        if any(not rows[index].same_as(first[index]) for rows in results.values())
        or any(rows[index].outcome == "timeout" for rows in results.values())
    ]
    agree = not disagreements
    summary = (
        f"{len(passing)} candidates agree on all {len(calls)} probes"
        if agree
        else f"{len(passing)} candidates disagree on {len(disagreements)} of {len(calls)} probes: "
        + "; ".join(disagreements[:3])
    )
    return probe_turn(
        run,
        phase=_PHASE,
        kind=kind,
        summary=summary,
        results=results,
        owner_field="agent",
        metadata={"agree": agree, "probes": calls, "disagreements": disagreements},
    )
