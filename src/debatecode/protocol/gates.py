"""Approval gates: the debate waits at configured phases for a human decision.

Off by default (every gate passes at once). When on, the gate is stored as
``pending`` and announced; a decision comes from the terminal (interactive
runs) or from anywhere that writes the store (``debatecode sessions approve``,
later the web dashboard), else the gate times out and counts as
``gates.on_timeout``. The decision is stored with the gate and journaled as a
turn, so a resumed session does not ask again.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING

from debatecode.protocol.events import GateDecided, GateRequested
from debatecode.protocol.journal import turn_key
from debatecode.protocol.settings import GateSettings
from debatecode.store.records import GateRecord, TurnRecord

if TYPE_CHECKING:
    from debatecode.protocol.session_run import SessionRun
    from debatecode.store.repository import SessionStore

__all__ = ["GateKeeper", "approves", "rejecting_gate"]

logger = logging.getLogger(__name__)


class GateKeeper:
    """Holds the debate at gated phases until approved, rejected or timed out."""

    def __init__(self, settings: GateSettings, store: SessionStore) -> None:
        self.settings = settings
        self.store = store

    def gated(self, phase: str) -> bool:
        return self.settings.enabled and phase in self.settings.phases

    async def check(self, run: SessionRun, phase: str, round_no: int) -> bool:
        """True when the debate may go on after ``phase``.

        Raises:
            StoreError: the gate could not be stored or read.
        """
        if not self.gated(phase):
            return True
        decided: GateRecord | None = None

        async def ask() -> TurnRecord:
            nonlocal decided
            summary, artifacts = run.gate_view(phase)
            gate = GateRecord(
                id=uuid.uuid4().hex,
                session_id=run.session_id,
                phase=phase,
                round=round_no,
                summary=summary,
                artifacts=artifacts,
            )
            await asyncio.to_thread(self.store.add_gate, gate)
            run.bus.emit(GateRequested(run.session_id, phase, gate.summary, gate.id))
            decided = await self._decide(run, gate)
            return run.tool_turn(
                round_no=round_no,
                phase="gate",
                agent_id="human",
                role="human",
                kind=phase,
                content=f"{decided.status}: {decided.reason}".strip(": "),
                metadata={
                    "gate_id": gate.id,
                    "decision": decided.status,
                    "approved": approves(decided, self.settings),
                    "reviewer": decided.reviewer,
                },
            )

        turn = await run.journal.replay_or_do(turn_key(round_no, "gate", "human", phase), ask)
        await run.record(turn)
        if decided is not None:
            run.bus.emit(GateDecided(run.session_id, phase, decided.status, decided.reviewer, decided.reason))
        return bool(turn.metadata.get("approved"))

    async def _decide(self, run: SessionRun, gate: GateRecord) -> GateRecord:
        if run.human is not None:
            answer = await run.human.approve(gate.phase, gate.summary)
            if answer is not None:
                status = "approved" if answer else "rejected"
                return await asyncio.to_thread(self.store.decide_gate, gate.id, status, reviewer="terminal")
        deadline = time.monotonic() + self.settings.timeout_s
        logger.warning(
            "waiting for approval of the %s gate of session %s: run `debatecode sessions approve %s` or `... reject %s`",
            gate.phase,
            run.session_id,
            run.session_id,
            run.session_id,
        )
        while time.monotonic() < deadline:
            current = await asyncio.to_thread(self.store.get_gate, gate.id)
            if current is not None and current.status != "pending":
                return current
            await asyncio.sleep(self.settings.poll_s)
        return await asyncio.to_thread(
            self.store.decide_gate, gate.id, "timed_out", reason=f"no decision within {self.settings.timeout_s:g}s"
        )


def approves(gate: GateRecord, settings: GateSettings) -> bool:
    """Whether a decided gate lets the debate go on: approved, or timed out with ``on_timeout = "approve"``."""
    return gate.status == "approved" or (gate.status == "timed_out" and settings.on_timeout == "approve")


def rejecting_gate(store: SessionStore, session_id: str, settings: GateSettings) -> GateRecord | None:
    """The gate that stopped session ``session_id`` (rejected, or timed out as a rejection), if one did.

    Raises:
        StoreError: the gates could not be read.
    """
    return next(
        (gate for gate in store.gates(session_id) if gate.status != "pending" and not approves(gate, settings)),
        None,
    )
