"""Candidates the tests cannot separate, ranked by how they behave on generated inputs.

Every distinct code among the candidates runs on the same generated inputs
(``execution/inputs.py``) in one journaled tool turn, so a resumed session
ranks the same way. The shared ranking (``execution/ranking.py``) then orders
them: tests passed first, then agreement with the other candidates of the same
tier (an error or a timeout agrees with nothing), then ranking order.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from debatecode.execution.inputs import generated_inputs
from debatecode.execution.ranking import Evidence, Ranked, behaviour_of, rank_candidates
from debatecode.protocol.journal import turn_key
from debatecode.protocol.probe_turns import probe_codes, probe_turn
from debatecode.protocol.run import DebateRun
from debatecode.protocol.state import Candidate
from debatecode.store.records import TurnRecord

__all__ = ["BehaviourRanking", "normalised_code", "rank_by_behaviour"]

logger = logging.getLogger(__name__)


def normalised_code(code: str) -> str:
    """Code with trailing spaces and blank edges removed: two candidates with the same text behave the same."""
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


@dataclass(frozen=True)
class BehaviourRanking:
    """The candidates in their new order, with the ranking rows and the inputs they ran on."""

    candidates: list[Candidate]
    rows: list[Ranked]
    inputs: list[str]

    def reason(self) -> str:
        best = self.rows[0]
        if best.tier_size < 2:
            return "the only candidate of its test tier"
        return (
            f"agrees with the other {best.tier_size - 1} candidates of its tier on {best.agreement} answers"
            f" over {len(self.inputs)} generated inputs ({best.cluster} of {best.tier_size} behave exactly alike)"
        )


async def rank_by_behaviour(
    run: DebateRun,
    candidates: Sequence[Candidate],
    *,
    phase: str,
    kind: str,
    limit: int,
    extra: Sequence[str] = (),
) -> BehaviourRanking | None:
    """``candidates`` (in their ranking order, all with code) re-ranked with their behaviour; None without inputs.

    ``extra`` calls (the Red team's distinguishing inputs) run first, before the ``limit`` generated ones.
    """
    inputs = list(dict.fromkeys([*extra, *generated_inputs(run.task, limit=limit, seed=0)]))
    if not inputs or not candidates:
        return None
    codes: dict[str, str] = {}
    for candidate in candidates:
        codes.setdefault(normalised_code(candidate.code or ""), candidate.code or "")
    turn = await run.journal.replay_or_do(
        turn_key(0, phase, "executor", kind), lambda: _probe_turn(run, list(codes.values()), inputs, phase, kind)
    )
    turn = await run.record(turn)
    inputs = list(turn.metadata.get("inputs", inputs))
    outputs: dict[str, list[str | None]] = turn.metadata.get("behaviours", {})
    evidence = [
        Evidence(
            position=index,
            tests=candidate.score(),
            behaviour=tuple(outputs.get(_code_id(list(codes), normalised_code(candidate.code or "")), [])),
        )
        for index, candidate in enumerate(candidates)
    ]
    rows = rank_candidates(evidence)
    return BehaviourRanking([candidates[row.evidence.position] for row in rows], rows, inputs)


def _code_id(keys: list[str], key: str) -> str:
    return f"code-{keys.index(key) + 1}"


async def _probe_turn(run: DebateRun, codes: list[str], inputs: list[str], phase: str, kind: str) -> TurnRecord:
    results = await probe_codes(run, {f"code-{index + 1}": code for index, code in enumerate(codes)}, inputs)
    behaviours = {code_id: list(behaviour_of(rows)) for code_id, rows in results.items()}
    differing = sum(1 for i in range(len(inputs)) if len({b[i] for b in behaviours.values()}) > 1)
    summary = f"{len(codes)} distinct candidates on {len(inputs)} generated inputs: they differ on {differing}"
    return probe_turn(
        run,
        phase=phase,
        kind=kind,
        summary=summary,
        results=results,
        owner_field="code",
        metadata={"inputs": inputs, "behaviours": behaviours, "differing": differing},
    )
