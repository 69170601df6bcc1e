"""The REST API, versioned under ``/v1``: start sessions, read them, and decide their gates and checkpoints.

Store reads run in a worker thread so that a slow disk never stalls the
event streams served on the same loop. Errors are ``DebatecodeError``s with the
CLI's messages; ``server.errors`` turns them into 4xx/5xx JSON.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, status

from debatecode.errors import ConfigError, SessionNotFound, TaskError, UserError
from debatecode.server.context import ServerContext, context_of
from debatecode.server.schemas import (
    ERROR_RESPONSES,
    DebateRequest,
    Health,
    SessionDetail,
    SessionSummary,
    SolveRequest,
    Started,
)
from debatecode.store.records import (
    CodeVersionRecord,
    GateRecord,
    SessionRecord,
    SessionStatus,
    TurnRecord,
    utcnow,
)

__all__ = ["Conflict", "find_sessions", "router", "session_detail", "session_summary", "version_diff"]

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)
Ctx = Annotated[ServerContext, Depends(context_of)]

SEARCH_SCOPE = 1000
"""How many of the newest sessions a text search (``q``) looks at."""
OPEN_STATUSES = ("pending", "running")
SERVER_OWNED = ("store_url", "out")
"""Settings a REST client may not override: where the server keeps its data."""


class Conflict(UserError):
    """The request does not fit the session's state (no pending gate, no waiting checkpoint, not running)."""


# -- health ---------------------------------------------------------------------------------


@router.get("/health", tags=["server"])
async def health(ctx: Ctx) -> Health:
    """The server is up; its store and how many sessions it runs."""
    from debatecode import __version__

    return Health(status="ok", version=__version__, store=ctx.store.url, running=len(ctx.manager.running()))


# -- starting sessions --------------------------------------------------------------------


@router.post("/sessions", status_code=status.HTTP_202_ACCEPTED, tags=["sessions"])
async def start_solve(body: SolveRequest, ctx: Ctx) -> Started:
    """Start a code debate (``debatecode solve``); it runs on, and its events stream from ``events``."""
    from debatecode.task import load_task, parse_task

    with ctx.manager.run_folder() as folder:
        config = _session_config(ctx, body.overrides, folder, gates=body.gates)
        if body.task is not None:
            task_file = folder / "task.md"
            task_file.write_text(body.task, encoding="utf-8")
            task = parse_task(body.task, task_file)
        else:
            path = _served_task_path(ctx.options.root, body.task_path or "")
            task = await asyncio.to_thread(load_task, path, max_bytes=config.task_max_bytes)
        session_id = await ctx.manager.start_solve(task, config, checkpoints=body.checkpoints)
    return _started(ctx, session_id, "code")


@router.post("/debates", status_code=status.HTTP_202_ACCEPTED, tags=["sessions"])
async def start_debate(body: DebateRequest, ctx: Ctx) -> Started:
    """Start a design debate (``debatecode debate``); it ends in a decision record."""
    from debatecode.llm.client import validate_model
    from debatecode.protocol.design.question import load_question

    with ctx.manager.run_folder() as folder:
        config = _session_config(ctx, body.overrides, folder, gates=body.gates)
        validate_model(config.model)
        for tier in config.design.models.values():
            validate_model(tier)
        # Through a file of our own: the text is never taken for a path on the server's machine.
        question_file = folder / "question.md"
        question_file.write_text(body.question, encoding="utf-8")
        question = load_question(str(question_file))
        if question.context:
            raise TaskError(
                "<question>",
                "context files cannot be named over the API (they would be read from the server's disk)",
                fix="put the material into the question text",
            )
        session_id = await ctx.manager.start_debate(question, config, repo=folder, checkpoints=body.checkpoints)
    return _started(ctx, session_id, "design")


def _served_task_path(root: Path, raw: str) -> Path:
    """A task path a client may name: a file under the server's working folder ``root``, never elsewhere on its disk.

    Raises:
        TaskError: the path leads outside the working folder.
    """
    path = (root / raw).resolve()
    if not path.is_relative_to(root):
        raise TaskError(raw, "a task_path must lie under the server's working folder", fix="send the task text as task")
    return path


def _session_config(ctx: ServerContext, overrides: dict[str, Any], folder: Path, *, gates: Sequence[str]) -> Any:
    """The server's config with the client's overrides; the output folder and store stay the server's."""
    from debatecode._api import apply_overrides

    for key in overrides:
        if key.replace("__", ".").split(".")[0] in SERVER_OWNED:
            raise ConfigError(f"override {key!r} is chosen by the server and cannot be set over the API", key=key)
    config = apply_overrides(ctx.options.config, overrides)
    if config.sandbox.backend == "unsafe-host" and ctx.options.config.sandbox.backend != "unsafe-host":
        raise ConfigError(
            "sandbox.backend 'unsafe-host' runs generated code with no isolation; only the server's own config "
            "can name it, never a request",
            key="sandbox.backend",
        )
    fixed: dict[str, Any] = {"out": str(folder)}
    if gates:
        fixed.update({"gates.enabled": True, "gates.phases": list(gates)})
    return apply_overrides(config, fixed)


def _started(ctx: ServerContext, session_id: str, kind: str) -> Started:
    record = ctx.store.get_session(session_id)
    return Started(
        id=session_id,
        kind="design" if kind == "design" else "code",
        status=record.status,
        events=f"/v1/sessions/{session_id}/events",
        dashboard=f"/sessions/{session_id}",
    )


# -- reading sessions ---------------------------------------------------------------------


@router.get("/sessions", tags=["sessions"])
async def list_sessions(
    ctx: Ctx,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    status_: Annotated[SessionStatus | None, Query(alias="status")] = None,
    kind: Annotated[str | None, Query(pattern="^(code|design)$")] = None,
    q: Annotated[
        str | None,
        Query(max_length=200, description="Words every listed session has in its id, title, topic or model."),
    ] = None,
) -> list[SessionSummary]:
    """Sessions, newest first; ``status`` must be a session status (422 otherwise).

    ``q`` looks among the newest ``SEARCH_SCOPE`` sessions of that status and kind.
    """
    return await find_sessions(ctx, limit, status_, kind, q)


async def find_sessions(
    ctx: ServerContext, limit: int, status: str | None, kind: str | None, q: str | None
) -> list[SessionSummary]:
    """Up to ``limit`` sessions, newest first, of ``status`` and ``kind``, with every word of ``q``."""
    words = (q or "").lower().split()
    scope = SEARCH_SCOPE if words else limit
    records = await asyncio.to_thread(ctx.store.list_sessions, scope, status, kind)
    if words:
        records = [record for record in records if all(word in _haystack(record) for word in words)][:limit]
    live = await asyncio.to_thread(_live_totals, ctx, records)
    return [session_summary(ctx, record, live.get(record.id)) for record in records]


def _haystack(record: SessionRecord) -> str:
    return " ".join((record.id, record.task_title, record.topic, record.model, record.kind)).lower()


def _live_totals(ctx: ServerContext, records: Sequence[SessionRecord]) -> dict[str, tuple[int, int]]:
    """(prompt, completion) tokens of the turns so far of each open session: its row has them only at the end.

    One grouped query for the whole page, whatever the number of open sessions (a session with no turn yet: 0, 0).
    """
    open_ids = [record.id for record in records if record.status in OPEN_STATUSES]
    totals = ctx.store.token_totals(open_ids)
    return {session_id: totals.get(session_id, (0, 0)) for session_id in open_ids}


@router.get("/sessions/{session_id}", tags=["sessions"])
async def get_session(session_id: str, ctx: Ctx) -> SessionDetail:
    """One session (an id or a unique prefix of one)."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    gates = await asyncio.to_thread(ctx.store.gates, record.id)
    live = await asyncio.to_thread(_live_totals, ctx, [record])
    return session_detail(ctx, record, gates, live.get(record.id))


@router.get("/sessions/{session_id}/turns", tags=["sessions"])
async def get_turns(session_id: str, ctx: Ctx) -> list[TurnRecord]:
    """Every turn: prompt, reply, code, test results, tokens."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    return await asyncio.to_thread(ctx.store.turns, record.id)


@router.get("/sessions/{session_id}/versions", tags=["sessions"])
async def get_versions(session_id: str, ctx: Ctx) -> list[CodeVersionRecord]:
    """Every code version, with its diff from the same agent's previous one, scores and git commit."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    return await asyncio.to_thread(ctx.store.versions, record.id)


@router.get("/sessions/{session_id}/versions/{number}/diff", tags=["sessions"])
async def get_version_diff(
    session_id: str, number: int, ctx: Ctx, against: Annotated[int | None, Query(ge=1)] = None
) -> dict[str, Any]:
    """A unified diff of version ``number`` against version ``against`` (default: the version before it)."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    versions = {v.version_number: v for v in await asyncio.to_thread(ctx.store.versions, record.id)}
    if number not in versions:
        raise SessionNotFound(record.id, f"it has no code version {number} (it has {len(versions)})")
    base_number = against if against is not None else number - 1
    base = versions.get(base_number)
    if against is not None and base is None:
        raise SessionNotFound(record.id, f"it has no code version {against} (it has {len(versions)})")
    return {
        "from": base_number if base is not None else None,
        "to": number,
        "diff": version_diff(base, versions[number]),
    }


def version_diff(base: CodeVersionRecord | None, version: CodeVersionRecord) -> str:
    """The unified diff from ``base`` (nothing when None) to ``version``."""
    before = base.code.splitlines(keepends=True) if base is not None else []
    label = f"v{base.version_number} ({base.agent_id})" if base is not None else "/dev/null"
    return "".join(
        difflib.unified_diff(
            before, version.code.splitlines(keepends=True), label, f"v{version.version_number} ({version.agent_id})"
        )
    )


@router.get("/sessions/{session_id}/audit", tags=["sessions"])
async def get_audit(session_id: str, ctx: Ctx) -> dict[str, Any]:
    """The audit trail, as ``debatecode audit export`` writes it."""
    from debatecode.protocol.audit import build_audit

    return await asyncio.to_thread(build_audit, ctx.store, session_id)


@router.get("/sessions/{session_id}/report", tags=["sessions"])
async def get_report(session_id: str, ctx: Ctx) -> dict[str, Any]:
    """The session's written result as markdown: ``report.md`` of a code debate, the ADR of a design debate."""
    record = await asyncio.to_thread(ctx.store.get_session, session_id)
    path = report_path(record)
    text = await asyncio.to_thread(path.read_text, encoding="utf-8") if path is not None else None
    return {"path": str(path) if path is not None else None, "markdown": text}


def report_path(record: SessionRecord) -> Path | None:
    """Where the session's markdown result is, if it was written."""
    if record.kind == "design":
        adr = record.outcome.get("adr")
        candidates = [Path(adr)] if isinstance(adr, str) and adr else []
    else:
        candidates = [Path(record.out_dir) / "report.md"] if record.out_dir else []
    return next((path for path in candidates if path.is_file()), None)


@router.get("/memory/search", tags=["memory"])
async def search_memory(
    ctx: Ctx,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    k: Annotated[int, Query(ge=1, le=100)] = 5,
    agent: Annotated[str | None, Query(max_length=200)] = None,
    session: Annotated[str | None, Query(max_length=64)] = None,
) -> list[dict[str, Any]]:
    """Reflexion episodes most similar to ``q``, best first, as ``debatecode memory search --json``."""
    if not q.strip():
        raise TaskError("<query>", "the search query is empty", fix="give words to look for, e.g. q=off+by+one")
    return await asyncio.to_thread(_search, ctx, q, k, agent, session)


def _search(ctx: ServerContext, query: str, k: int, agent: str | None, session: str | None) -> list[dict[str, Any]]:
    memory = ctx.memory()
    hits = memory.search(query, k=k, agent_id=agent, session_id=session)
    threshold = memory.settings.similarity_threshold
    return [
        {"rank": rank, "score": score, "below_threshold": score < threshold, **episode.model_dump(mode="json")}
        for rank, (episode, score) in enumerate(hits, start=1)
    ]


# -- shaping ----------------------------------------------------------------------------------


def session_summary(
    ctx: ServerContext, record: SessionRecord, tokens_so_far: tuple[int, int] | None = None
) -> SessionSummary:
    """One line of the session list; an open session shows ``tokens_so_far`` and the time since it was created."""
    live = ctx.manager.live(record.id)
    passed, total = record.outcome.get("passed"), record.outcome.get("total")
    prompt_tokens, completion_tokens, duration_s = record.prompt_tokens, record.completion_tokens, record.duration_s
    if record.status in OPEN_STATUSES:
        if tokens_so_far is not None:
            prompt_tokens, completion_tokens = (
                max(prompt_tokens, tokens_so_far[0]),
                max(completion_tokens, tokens_so_far[1]),
            )
        duration_s = max(duration_s, (utcnow() - _aware(record.created_at)).total_seconds())
    return SessionSummary(
        id=record.id,
        kind=record.kind,
        status=record.status,
        title=record.task_title,
        model=record.model,
        created_at=record.created_at,
        completed_at=record.completed_at,
        duration_s=duration_s,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=record.cost_usd,
        tests_passed=passed if isinstance(passed, int) else None,
        tests_total=total if isinstance(total, int) else None,
        live=live is not None and live.running,
    )


def _aware(moment: datetime) -> datetime:
    """``moment`` with a zone: the store keeps UTC, and SQLite gives it back without one."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def session_detail(
    ctx: ServerContext, record: SessionRecord, gates: list[GateRecord], tokens_so_far: tuple[int, int] | None = None
) -> SessionDetail:
    live = ctx.manager.live(record.id)
    here = live is not None and live.running
    return SessionDetail(
        **session_summary(ctx, record, tokens_so_far).model_dump(),
        topic=record.topic,
        error=record.error,
        outcome=record.outcome,
        out_dir=record.out_dir,
        branch=record.branch,
        total_rounds=record.total_rounds,
        waiting_checkpoint=live.human.waiting_round if live is not None and here else None,
        waiting_escalation=live is not None and here and live.human.escalation is not None,
        pending_gates=[gate.id for gate in gates if gate.status == "pending"],
    )
