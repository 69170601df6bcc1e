"""Probes run by the executor as one tool turn: each code on the same calls, a row per call in the turn.

Behaviour ranking (``behaviour.py``) and the early stop (``early_stop.py``) both ask
how several candidates answer the same calls; they differ in what they conclude.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from debatecode.execution.probes import ProbeResult
from debatecode.protocol.run import DebateRun
from debatecode.store.records import TurnRecord

__all__ = ["probe_codes", "probe_turn"]

logger = logging.getLogger(__name__)


async def probe_codes(run: DebateRun, codes: Mapping[str, str], calls: list[str]) -> dict[str, list[ProbeResult]]:
    """What each code (by its owner) does on ``calls``, one code after the other."""
    return {owner: await run.workspace.probes.run(code, calls) for owner, code in codes.items()}


def probe_turn(
    run: DebateRun,
    *,
    phase: str,
    kind: str,
    summary: str,
    results: Mapping[str, list[ProbeResult]],
    owner_field: str,
    metadata: dict[str, Any],
) -> TurnRecord:
    """The executor's turn for ``results``: one tool call per probe, its owner under ``owner_field``."""
    logger.info("session %s: %s", run.session_id, summary)
    return run.tool_turn(
        round_no=0,
        phase=phase,
        agent_id="executor",
        role="executor",
        kind=kind,
        content=summary,
        tool_calls=[
            {owner_field: owner, "call": r.call, "outcome": r.outcome, "result": r.expected}
            for owner, rows in results.items()
            for r in rows
        ],
        metadata=metadata,
    )
