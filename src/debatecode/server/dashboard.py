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

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from debatecode.errors import SessionNotFound
from debatecode.server import bench_pages
from debatecode.server.api import report_path, session_detail, session_summary, version_diff
from debatecode.server.context import ServerContext, context_of
from debatecode.server.rendering import page, render_markdown
from debatecode.server.session_view import AgentCard, LiveView, PendingGate, count_tests, read_view
from debatecode.store.records import CodeVersionRecord, GateRecord, SessionRecord, TurnRecord

__all__ = ["diff_lines", "read_transcript", "router", "without_section"]

router = APIRouter(include_in_schema=False)
Ctx = Annotated[ServerContext, Depends(context_of)]

LIST_LIMIT = 200
"""Sessions the list page shows (newest first)."""
OPEN_STATUSES = ("pending", "running")


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
async def sessions_page(request: Request, ctx: Ctx) -> HTMLResponse:
    """Every session, newest first; the page refreshes its rows from ``/v1/sessions``."""
    records = await asyncio.to_thread(ctx.store.list_sessions, LIST_LIMIT)
    return page(request, "sessions.html", {"sessions": [session_summary(ctx, record) for record in records]})


@router.get("/sessions/{session_id}", response_class=HTMLResponse)
async def session_page(session_id: str, request: Request, ctx: Ctx) -> HTMLResponse:
    """One session: live cards, timeline, tests, vote and controls, then its transcript."""
    try:
        context = await asyncio.to_thread(_session_context, ctx, session_id)
    except SessionNotFound as exc:
        return page(request, "not_found.html", {"what": "session", "message": str(exc)}, status_code=404)
    return page(request, "session.html", context)


@router.get("/sessions/{session_id}/transcript", response_class=HTMLResponse)
async def transcript_fragment(session_id: str, request: Request, ctx: Ctx) -> HTMLResponse:
    """The transcript part of the session page alone; the page reloads it when the session ends."""
    try:
        record = await asyncio.to_thread(ctx.store.get_session, session_id)
    except SessionNotFound as exc:
        return page(request, "not_found.html", {"what": "session", "message": str(exc)}, status_code=404)
    transcript = await asyncio.to_thread(read_transcript, ctx, record)
    return page(request, "_transcript.html", {"session": record, "transcript": transcript})


def _session_context(ctx: ServerContext, session_id: str) -> dict[str, Any]:
    record = ctx.store.get_session(session_id)
    # Events first, then gates: a gate announced in between is then in both, never in neither.
    view = read_view(ctx.store, record.id)
    gates = ctx.store.gates(record.id)
    live = ctx.manager.live(record.id)
    here = live is not None and live.running
    _settle_pending(view, here, gates)
    return {
        "session": session_detail(ctx, record, gates),
        "view": view,
        "open": record.status in OPEN_STATUSES,
        "here": here,
        "blank_card": AgentCard(""),
        "transcript": read_transcript(ctx, record),
    }


def _settle_pending(view: LiveView, here: bool, gates: list[GateRecord]) -> None:
    """Offer only what can be answered: a checkpoint of a session this server runs, a gate pending in the store.

    A checkpoint is announced a moment before its session waits for the answer,
    so the announcement, not ``waiting_checkpoint``, decides (the page retries an
    early answer).
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
