"""Acting on sessions over REST: gates, checkpoints, escalations and cancellation.

Gates are decided in the store, so that a gate of a session run by another
process (``debatecode solve`` with gates on) can be decided here too. A
checkpoint or an escalation can be answered only for a session this server
runs, whose ``WebHuman`` waits for the answer. The seed's spelling of the gate
routes (``/v1/debates/{id}/approve``, ``.../reject``, ``.../gates``) is served
beside ``/v1/sessions/{id}/gates/...``: the same handlers, for any session.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, status

from debatecode.server.api import Conflict, session_detail
from debatecode.server.context import ServerContext, context_of
from debatecode.server.schemas import (
    ERROR_RESPONSES,
    CheckpointRequest,
    CheckpointResponse,
    EscalationOption,
    EscalationRequest,
    EscalationView,
    GateDecisionRequest,
    SessionDetail,
)
from debatecode.store.records import GateRecord, TurnRecord

__all__ = ["escalation_view", "router"]

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)
Ctx = Annotated[ServerContext, Depends(context_of)]
GateBody = Annotated[GateDecisionRequest | None, Body()]

ESCALATION_TURN = "r0/escalation/human/choice"
"""The journal key of a design debate's escalation answer (``protocol/design/synthesis.py``)."""


# -- gates --------------------------------------------------------------------------------------


@router.get("/sessions/{session_id}/gates", tags=["gates"])
@router.get("/debates/{session_id}/gates", tags=["gates"])
async def get_gates(session_id: str, ctx: Ctx) -> list[GateRecord]:
    """The session's approval gates, oldest first, with what the reviewer sees and the decisions."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    return await asyncio.to_thread(ctx.store.gates, record.id)


@router.post("/sessions/{session_id}/gates/approve", tags=["gates"])
@router.post("/debates/{session_id}/approve", tags=["gates"])
async def approve_gate(session_id: str, ctx: Ctx, body: GateBody = None) -> GateRecord:
    """Approve the pending gate: the session goes on. The body is optional."""
    return await asyncio.to_thread(_decide, ctx, session_id, body or GateDecisionRequest(), "approved")


@router.post("/sessions/{session_id}/gates/reject", tags=["gates"])
@router.post("/debates/{session_id}/reject", tags=["gates"])
async def reject_gate(session_id: str, ctx: Ctx, body: GateBody = None) -> GateRecord:
    """Reject the pending gate (with a comment): the session stops as ``cancelled``. The body is optional."""
    return await asyncio.to_thread(_decide, ctx, session_id, body or GateDecisionRequest(), "rejected")


def _decide(ctx: ServerContext, session_id: str, body: GateDecisionRequest, decision: str) -> GateRecord:
    record = ctx.store.get_session(session_id)
    pending = [gate for gate in ctx.store.gates(record.id) if gate.status == "pending"]
    if body.gate_id is not None:
        pending = [gate for gate in pending if gate.id == body.gate_id]
    if not pending:
        which = f"gate {body.gate_id}" if body.gate_id else "any gate"
        raise Conflict(f"session {record.id} is not waiting at {which}")
    decided = ctx.store.decide_gate(pending[-1].id, decision, reviewer=body.reviewer, reason=body.comment)
    if decided.status != decision:
        raise Conflict(f"gate {decided.id} was decided already: {decided.status}")
    return decided


# -- checkpoints ----------------------------------------------------------------------------------


@router.post("/sessions/{session_id}/checkpoint", tags=["checkpoints"])
async def answer_checkpoint(session_id: str, body: CheckpointRequest, ctx: Ctx) -> CheckpointResponse:
    """Continue, guide (with text every later prompt shows) or end the session waiting at a checkpoint."""
    from debatecode.protocol.human import CheckpointDecision

    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    decision = CheckpointDecision(action=body.action, guidance=body.guidance)
    answered = ctx.manager.checkpoint(record.id, decision)
    if answered is None:
        raise Conflict(
            f"session {record.id} is not waiting at a checkpoint of this server "
            "(only sessions started here with checkpoints on wait for one)"
        )
    return CheckpointResponse(round=answered, action=body.action)


# -- escalations ----------------------------------------------------------------------------------


@router.get("/sessions/{session_id}/escalation", tags=["checkpoints"])
@router.get("/debates/{session_id}/escalation", tags=["checkpoints"])
async def get_escalation(session_id: str, ctx: Ctx) -> EscalationView:
    """A design debate's escalation: ``waiting`` for a choice, ``decided``, ``undecided``, or ``none``."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    turns = await asyncio.to_thread(ctx.store.turns, record.id) if record.kind == "design" else []
    return escalation_view(ctx, record.id, turns)


@router.post("/sessions/{session_id}/escalation", tags=["checkpoints"])
@router.post("/debates/{session_id}/escalation", tags=["checkpoints"])
async def choose_option(session_id: str, body: EscalationRequest, ctx: Ctx) -> EscalationView:
    """Choose an option (``A``, ``B``, ``C``...) of the escalation a design debate of this server waits at.

    The choice goes where a terminal answer goes: the debate journals it and
    its decision record is written from it.
    """
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    chosen = ctx.manager.choose(record.id, body.choice, body.guidance)
    if chosen is None:
        raise Conflict(
            f"session {record.id} is not waiting for a choice at an escalation of this server "
            "(only design debates started here with checkpoints on wait for one)"
        )
    question = escalation_view(ctx, record.id, [])
    return question.model_copy(
        update={
            "status": "decided",
            "choice": chosen[0],
            "text": chosen[1],
            "guidance": (body.guidance or "").strip() or None,
            "decided_by": "human",
        }
    )


def escalation_view(ctx: ServerContext, session_id: str, turns: list[TurnRecord]) -> EscalationView:
    """The escalation of ``session_id``: the one its ``WebHuman`` waits at, else the journaled answer in ``turns``."""
    live = ctx.manager.live(session_id)
    asked = live.human.escalation if live is not None and live.running else None
    if asked is not None:
        return EscalationView(
            status="waiting",
            reason=asked.reason,
            summary=asked.summary,
            options=[EscalationOption(label=label, text=text) for label, text in asked.options],
            positions=asked.positions,
        )
    choices = [t for t in turns if t.key == ESCALATION_TURN or t.key.endswith("/escalation/human/choice")]
    turn = max(choices, key=lambda t: t.seq) if choices else None  # the latest escalation, after guided rounds
    if turn is None:
        return EscalationView(status="none")
    stored: dict[str, Any] = turn.metadata.get("escalation") or {}
    options = [
        EscalationOption(label=str(o.get("label", "")), text=str(o.get("text", "")))
        for o in stored.get("options") or []
        if isinstance(o, dict)
    ]
    choice = turn.metadata.get("choice")
    return EscalationView(
        status="decided" if choice else "undecided",
        reason=str(stored.get("reason") or ""),
        options=options,
        positions={str(k): str(v) for k, v in (stored.get("positions") or {}).items()},
        choice=str(choice) if choice else None,
        text=next((o.text for o in options if o.label == choice), ""),
        guidance=turn.metadata.get("guidance"),
        decided_by="human" if choice else "nobody",
    )


# -- cancelling -----------------------------------------------------------------------------------


@router.post("/sessions/{session_id}/cancel", status_code=status.HTTP_202_ACCEPTED, tags=["sessions"])
async def cancel_session(session_id: str, ctx: Ctx) -> SessionDetail:
    """Stop a running session; it ends ``cancelled``, its turns kept, and ``--resume`` can continue it."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    if not ctx.manager.cancel(record.id):
        raise Conflict(f"session {record.id} is not running on this server (status {record.status})")
    return session_detail(ctx, record, await asyncio.to_thread(ctx.store.gates, record.id))
