"""The dashboard: the session list, each session's live view and transcript, and the benchmark pages.

Pages are rendered on the server (``templates/``); one small script
(``static/dashboard.js``) refreshes the list, follows a session's event stream
and sends the Continue / Guide / End, Approve / Reject and Cancel requests to
the REST API. Every link starts with the app's root path, so the dashboard works
behind a path prefix and carries the token cookie like any other request.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from debatecode.errors import SessionNotFound
from debatecode.server import bench_pages
from debatecode.server.api import find_sessions, report_path, session_detail, version_diff
from debatecode.server.code_view import Comparison, compare_versions, latest_test_runs, model_calls
from debatecode.server.context import ServerContext, context_of
from debatecode.server.decisions import escalation_view
from debatecode.server.design_view import DesignView, build_design_view
from debatecode.server.rendering import page, render_markdown
from debatecode.server.session_view import AgentCard, LiveView, PendingGate, count_tests, read_view
from debatecode.store.records import CodeVersionRecord, GateRecord, SessionRecord, TurnRecord

__all__ = ["diff_lines", "read_transcript", "router", "without_section"]

router = APIRouter(include_in_schema=False)
Ctx = Annotated[ServerContext, Depends(context_of)]

LIST_LIMIT = 200
"""Sessions the list page shows (newest first)."""
OPEN_STATUSES = ("pending", "running")
KINDS = ("code", "design")
STATUSES = ("pending", "running", "paused", "completed", "failed", "cancelled", "budget_exceeded")
"""What the list's filters offer (a session's status is one of these)."""


@dataclass(frozen=True)
class TurnEntry:
    """A stored turn with its test counts."""

    record: TurnRecord
    tests: tuple[int, int] | None


@dataclass(frozen=True)
class VersionEntry:
    """A stored code version with its diff, split into lines marked ``add``, ``del``, ``hunk`` or ``ctx``."""

    record: CodeVersionRecord
    lines: list[tuple[str, str]]


@dataclass(frozen=True)
class Transcript:
    """Everything stored about a session, for the transcript part of its page."""

    turns: list[TurnEntry]
    versions: list[VersionEntry]
    gates: list[GateRecord]
    report_html: Markup | None
    """Rendered by markdown-it with raw HTML off: safe to put in the page as it is."""
    report_file: str | None


@router.get("/", response_class=HTMLResponse)
async def sessions_page(
    request: Request,
    ctx: Ctx,
    kind: Annotated[str, Query(max_length=20)] = "",
    status: Annotated[str, Query(max_length=20)] = "",
    q: Annotated[str, Query(max_length=200)] = "",
) -> HTMLResponse:
    """Sessions, newest first, filtered by kind, status and words; the page refreshes its rows from ``/v1/sessions``."""
    filters = {
        "kind": kind if kind in KINDS else "",
        "status": status if status in STATUSES else "",
        "q": q.strip(),
    }
    summaries = await find_sessions(
        ctx, LIST_LIMIT, filters["status"] or None, filters["kind"] or None, filters["q"] or None
    )
    context = {"sessions": summaries, "filters": filters, "kinds": KINDS, "statuses": STATUSES}
    return page(request, "sessions.html", context)


@router.get("/sessions/{session_id}", response_class=HTMLResponse)
async def session_page(
    session_id: str,
    request: Request,
    ctx: Ctx,
    a: Annotated[int | None, Query(ge=1)] = None,
    b: Annotated[int | None, Query(ge=1)] = None,
) -> HTMLResponse:
    """One session, live: a code debate's cards, timeline, tests and versions, or a design debate's rounds and record."""
    try:
        context = await asyncio.to_thread(_session_context, ctx, session_id, a, b)
    except SessionNotFound as exc:
        return page(request, "not_found.html", {"what": "session", "message": str(exc)}, status_code=404)
    return page(request, "design.html" if context["session"].kind == "design" else "session.html", context)


@router.get("/sessions/{session_id}/compare", response_class=HTMLResponse)
async def compare_fragment(
    session_id: str, request: Request, ctx: Ctx, a: Annotated[int, Query(ge=1)], b: Annotated[int, Query(ge=1)]
) -> HTMLResponse:
    """Code versions ``a`` and ``b`` side by side (the session page fetches it when its Compare form is sent)."""
    try:
        record = await asyncio.to_thread(ctx.store.get_session, session_id)
        versions = await asyncio.to_thread(ctx.store.versions, record.id)
        comparison = _comparison(versions, a, b)
    except SessionNotFound as exc:
        return page(request, "not_found.html", {"what": "session", "message": str(exc)}, status_code=404)
    return page(request, "_compare.html", {"comparison": comparison, "compare_error": None})


@router.get("/sessions/{session_id}/design", response_class=HTMLResponse)
async def design_fragment(session_id: str, request: Request, ctx: Ctx) -> HTMLResponse:
    """The rounds, chart, escalation and record of a design debate; its page reloads it as events come in."""
    try:
        record = await asyncio.to_thread(ctx.store.get_session, session_id)
        design = await asyncio.to_thread(_design, ctx, record, read_view(ctx.store, record.id))
    except SessionNotFound as exc:
        return page(request, "not_found.html", {"what": "session", "message": str(exc)}, status_code=404)
    live = ctx.manager.live(record.id)
    return page(request, "_design_body.html", {"design": design, "here": live is not None and live.running})


@router.get("/sessions/{session_id}/transcript", response_class=HTMLResponse)
async def transcript_fragment(session_id: str, request: Request, ctx: Ctx) -> HTMLResponse:
    """The transcript part of the session page alone; the page reloads it when the session ends."""
    try:
        record = await asyncio.to_thread(ctx.store.get_session, session_id)
    except SessionNotFound as exc:
        return page(request, "not_found.html", {"what": "session", "message": str(exc)}, status_code=404)
    transcript = await asyncio.to_thread(read_transcript, ctx, record)
    return page(request, "_transcript.html", {"session": record, "transcript": transcript})


def _session_context(ctx: ServerContext, session_id: str, a: int | None, b: int | None) -> dict[str, Any]:
    record = ctx.store.get_session(session_id)
    # Events first, then gates: a gate announced in between is then in both, never in neither.
    view = read_view(ctx.store, record.id)
    gates = ctx.store.gates(record.id)
    live = ctx.manager.live(record.id)
    here = live is not None and live.running
    _settle_pending(view, here, gates)
    transcript = read_transcript(ctx, record)
    turns = [entry.record for entry in transcript.turns]
    tokens = (sum(t.prompt_tokens for t in turns), sum(t.completion_tokens for t in turns))
    context: dict[str, Any] = {
        "session": session_detail(ctx, record, gates, tokens),
        "view": view,
        "open": record.status in OPEN_STATUSES,
        "here": here,
        "blank_card": AgentCard(""),
        "transcript": transcript,
    }
    if record.kind == "design":
        context["design"] = _design(ctx, record, view, turns)
        return context
    versions = [entry.record for entry in transcript.versions]
    comparison, problem = None, None
    if a is not None and b is not None:
        try:
            comparison = _comparison(versions, a, b)
        except SessionNotFound as exc:
            problem = str(exc)
    context.update(
        tests=latest_test_runs(turns),
        calls=model_calls(turns),
        comparison=comparison,
        compare_error=problem,
        compare_pick=(a or max(len(versions) - 1, 1), b or len(versions)),
    )
    return context


def _comparison(versions: list[CodeVersionRecord], a: int, b: int) -> Comparison:
    """Versions ``a`` and ``b`` side by side.

    Raises:
        SessionNotFound: the session has no version ``a`` or ``b``.
    """
    by_number = {version.version_number: version for version in versions}
    for number in (a, b):
        if number not in by_number:
            session = versions[0].session_id if versions else "?"
            raise SessionNotFound(session, f"it has no code version {number} (it has {len(versions)})")
    return compare_versions(by_number[a], by_number[b])


def _design(
    ctx: ServerContext, record: SessionRecord, view: LiveView, turns: list[TurnRecord] | None = None
) -> DesignView:
    turns = turns if turns is not None else ctx.store.turns(record.id)
    path = report_path(record)
    report = path.read_text(encoding="utf-8", errors="replace") if path is not None else None
    design = record.config.get("design") if isinstance(record.config.get("design"), dict) else {}
    target = design.get("target_satisfaction") if isinstance(design, dict) else None
    return build_design_view(
        turns,
        view,
        escalation_view(ctx, record.id, turns),
        report,
        target=target if isinstance(target, int) else None,
    )


def _settle_pending(view: LiveView, here: bool, gates: list[GateRecord]) -> None:
    """Offer only what can be answered: a checkpoint of a session this server runs, a gate pending in the store.

    A checkpoint of this server's session waits for its answer from the moment it is
    announced (``WebHuman.announced``), so the page may offer it as soon as it hears of it.
    """
    if not here:
        view.checkpoint = None
    pending = [gate for gate in gates if gate.status == "pending"]
    view.gate = PendingGate(pending[-1].phase, pending[-1].summary, pending[-1].id) if pending else None


def read_transcript(ctx: ServerContext, record: SessionRecord) -> Transcript:
    """The turns, code versions (with diffs), gates and rendered report of ``record``."""
    turns = [TurnEntry(turn, count_tests(turn.test_results)) for turn in ctx.store.turns(record.id)]
    versions = ctx.store.versions(record.id)
    path = report_path(record)
    report = without_section(path.read_text(encoding="utf-8", errors="replace"), "Transcript") if path else None
    return Transcript(
        turns=turns,
        versions=[VersionEntry(version, diff_lines(_diff(versions, version))) for version in versions],
        gates=ctx.store.gates(record.id),
        report_html=render_markdown(report) if report is not None else None,
        report_file=str(path) if path is not None else None,
    )


def without_section(markdown: str, title: str) -> str:
    """``markdown`` less its ``## <title>`` section.

    The report's transcript is raw ``<details>`` HTML, which the page would show
    as text; the page shows every turn itself.
    """
    kept: list[str] = []
    skipping = in_fence = False
    for line in markdown.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif line.startswith("## ") and not in_fence:
            skipping = line[3:].strip() == title
        if not skipping:
            kept.append(line)
    return "".join(kept)


def _diff(versions: list[CodeVersionRecord], version: CodeVersionRecord) -> str:
    """The stored diff from the agent's previous version; else one computed against it (or against nothing)."""
    if version.diff_from_previous:
        return version.diff_from_previous
    earlier = [v for v in versions if v.agent_id == version.agent_id and v.version_number < version.version_number]
    return version_diff(earlier[-1] if earlier else None, version)


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """Each line of a unified diff with its kind: ``add``, ``del``, ``hunk`` (``@@``, file headers) or ``ctx``."""
    marked: list[tuple[str, str]] = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---", "@@")):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        marked.append((kind, line))
    return marked


router.include_router(bench_pages.router)
