"""The benchmark pages: result folders of ``bench humaneval`` and ``sweep`` runs, with per-problem drill-down.

A result folder is one holding ``results.jsonl`` (``bench humaneval``: one
line per problem and strategy), ``sweep.jsonl`` (``sweep``: one line per run)
or their reports, ``report.md`` / ``sweep.md``. The folders of
``ServerOptions.bench_dirs`` are looked at, and their immediate subfolders.
Only files directly inside a listed folder, of a few harmless kinds, are ever
served: the folder is found by its listed name, never by a path from the URL.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from debatecode.server.context import ServerContext, context_of
from debatecode.server.rendering import SECURITY_HEADERS, page, render_markdown, root_of

__all__ = [
    "BenchFolder",
    "DrillDown",
    "Outcome",
    "ProblemResults",
    "drill_down",
    "find_bench_folders",
    "read_rows",
    "router",
    "served_file",
]

router = APIRouter(include_in_schema=False)
Ctx = Annotated[ServerContext, Depends(context_of)]

RESULT_FILES = ("results.jsonl", "sweep.jsonl")
REPORT_FILES = ("report.md", "sweep.md")
NOTES_FILE = "README.md"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
SERVED_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".md": "text/plain; charset=utf-8",
    ".jsonl": "text/plain; charset=utf-8",
    ".json": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".csv": "text/plain; charset=utf-8",
}
"""What a folder's file route serves, and as what. Never HTML or SVG, which a browser would run scripts in."""
MAX_ROWS = 20_000
"""Result lines read per folder; a page says when there were more."""
MAX_TEXT_BYTES = 2_000_000
"""A report longer than this is shown cut."""

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class BenchFolder:
    """One result folder, by the name the pages use for it."""

    name: str
    path: Path

    @property
    def results_file(self) -> Path | None:
        return _first_file(self.path, RESULT_FILES)

    @property
    def report_file(self) -> Path | None:
        return _first_file(self.path, REPORT_FILES)

    @property
    def notes_file(self) -> Path | None:
        return _first_file(self.path, (NOTES_FILE,))

    @property
    def kind(self) -> str:
        """``sweep``, ``humaneval`` (a ``bench humaneval`` report) or ``results`` (result lines only)."""
        if (self.path / "sweep.jsonl").is_file() or (self.path / "sweep.md").is_file():
            return "sweep"
        return "humaneval" if (self.path / "report.md").is_file() else "results"

    @property
    def images(self) -> list[str]:
        """Names of the plots in the folder."""
        return sorted(p.name for p in self.path.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)

    @property
    def modified(self) -> float:
        """When its newest result or report file changed (seconds since the epoch)."""
        files = [p for p in (self.results_file, self.report_file) if p is not None]
        return max((p.stat().st_mtime for p in files), default=self.path.stat().st_mtime)


@dataclass(frozen=True)
class Outcome:
    """One strategy's result on one problem (one line of the results)."""

    label: str
    """``pass``, ``fail`` or ``passed/total``."""
    ok: bool | None
    status: str = ""
    session_id: str | None = None
    """Set only when it looks like a session id, so that it can be linked."""
    tokens: int | None = None
    seconds: float | None = None


@dataclass(frozen=True)
class ProblemResults:
    problem: str
    outcomes: dict[str, list[Outcome]]
    """Strategy to its results on this problem (several for repeated runs)."""


@dataclass(frozen=True)
class DrillDown:
    """A result folder's lines as a problem-by-strategy table."""

    strategies: list[str] = field(default_factory=list)
    problems: list[ProblemResults] = field(default_factory=list)
    passed: dict[str, int] = field(default_factory=dict)
    """Strategy to how many of its results passed."""
    runs: dict[str, int] = field(default_factory=dict)
    skipped: int = 0
    """Lines that were not JSON objects."""
    truncated: bool = False


def find_bench_folders(dirs: Iterable[Path]) -> list[BenchFolder]:
    """Every result folder in ``dirs`` (each folder itself and its subfolders), newest first; names are unique."""
    folders: list[BenchFolder] = []
    names: set[str] = set()
    for base in dirs:
        if not base.is_dir():
            continue
        for candidate in [base, *sorted(p for p in base.iterdir() if p.is_dir())]:
            if _first_file(candidate, RESULT_FILES + REPORT_FILES) is None:
                continue
            name, n = candidate.name, 1
            while name in names:
                n += 1
                name = f"{candidate.name}-{n}"
            names.add(name)
            folders.append(BenchFolder(name, candidate))
    return sorted(folders, key=lambda folder: folder.modified, reverse=True)


def read_rows(path: Path, limit: int = MAX_ROWS) -> tuple[list[dict[str, Any]], int, bool]:
    """The JSON-object lines of ``path`` (at most ``limit``), how many lines were not, and whether it was cut."""
    rows: list[dict[str, Any]] = []
    skipped = 0
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if not line.strip():
                continue
            if len(rows) >= limit:
                return rows, skipped, True
            try:
                row = json.loads(line)
            except ValueError:
                skipped += 1
                continue
            if isinstance(row, dict):
                rows.append(row)
            else:
                skipped += 1
    return rows, skipped, False


def drill_down(rows: Sequence[Mapping[str, Any]], *, skipped: int = 0, truncated: bool = False) -> DrillDown:
    """``rows`` grouped by problem, then by strategy, in the order they first appear."""
    table = DrillDown(skipped=skipped, truncated=truncated)
    by_problem: dict[str, ProblemResults] = {}
    for row in rows:
        problem, strategy, outcome = _problem_of(row), _strategy_of(row), _outcome_of(row)
        if strategy not in table.runs:
            table.strategies.append(strategy)
            table.runs[strategy], table.passed[strategy] = 0, 0
        table.runs[strategy] += 1
        table.passed[strategy] += 1 if outcome.ok else 0
        results = by_problem.get(problem)
        if results is None:
            results = by_problem[problem] = ProblemResults(problem, {})
            table.problems.append(results)
        results.outcomes.setdefault(strategy, []).append(outcome)
    return table


def served_file(folder: BenchFolder, filename: str) -> Path | None:
    """The file ``filename`` directly inside ``folder``, if it is one of the kinds served; else None.

    Anything that would leave the folder (``..``, a separator, a symlink
    pointing elsewhere) is refused.
    """
    if filename in ("", ".", "..") or any(mark in filename for mark in ("/", "\\", "\x00")):
        return None
    base = folder.path.resolve()
    target = (base / filename).resolve()
    if target.parent != base or not target.is_file() or target.suffix.lower() not in SERVED_TYPES:
        return None
    return target


def _first_file(folder: Path, names: Sequence[str]) -> Path | None:
    return next((folder / name for name in names if (folder / name).is_file()), None)


def _problem_of(row: Mapping[str, Any]) -> str:
    for key in ("task_id", "instance_id", "problem", "task"):
        if row.get(key) not in (None, ""):
            return str(row[key])
    return "?"


def _strategy_of(row: Mapping[str, Any]) -> str:
    values = row.get("values")
    if isinstance(values, Mapping) and values:
        return ", ".join(f"{key}={value}" for key, value in values.items())
    for key in ("strategy", "variant"):
        if row.get(key) not in (None, ""):
            return str(row[key])
    return "-"


def _outcome_of(row: Mapping[str, Any]) -> Outcome:
    passed, total = row.get("passed"), row.get("total")
    if isinstance(passed, bool):
        label, ok = ("pass" if passed else "fail"), passed
    elif isinstance(passed, int) and isinstance(total, int):
        label = f"{passed}/{total}"
        all_passed = row.get("all_passed")
        ok = all_passed if isinstance(all_passed, bool) else (total > 0 and passed == total)
    else:
        label, ok = "-", None
    session = row.get("session_id")
    tokens, seconds, status = row.get("tokens"), row.get("seconds"), row.get("status")
    return Outcome(
        label=label,
        ok=ok,
        status=str(status) if status not in (None, "", "completed") else "",
        session_id=session if isinstance(session, str) and _SESSION_ID.match(session) else None,
        tokens=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
        seconds=float(seconds) if isinstance(seconds, int | float) and not isinstance(seconds, bool) else None,
    )


def _read_text(path: Path | None) -> str | None:
    if path is None:
        return None
    with path.open(encoding="utf-8", errors="replace") as text:
        content = text.read(MAX_TEXT_BYTES + 1)
    return content if len(content) <= MAX_TEXT_BYTES else content[:MAX_TEXT_BYTES] + "\n\n*(cut)*\n"


def _folder(ctx: ServerContext, name: str) -> BenchFolder | None:
    return next((folder for folder in find_bench_folders(ctx.options.bench_dirs) if folder.name == name), None)


def _listing(ctx: ServerContext) -> list[dict[str, Any]]:
    return [{"folder": folder, "table": _table(folder)} for folder in find_bench_folders(ctx.options.bench_dirs)]


def _table(folder: BenchFolder) -> DrillDown:
    results = folder.results_file
    if results is None:
        return DrillDown()
    rows, skipped, truncated = read_rows(results)
    return drill_down(rows, skipped=skipped, truncated=truncated)


def _detail(folder: BenchFolder, root: str) -> dict[str, Any]:
    report = _read_text(folder.report_file)
    notes = _read_text(folder.notes_file)
    image_base = f"{root}/bench/{quote(folder.name, safe='')}/files/"
    return {
        "folder": folder,
        "table": _table(folder),
        "report_html": render_markdown(report, image_base=image_base) if report is not None else None,
        "notes_html": render_markdown(notes, image_base=image_base) if notes is not None else None,
        "plots": [name for name in folder.images if report is None or name not in report],
        "files_base": image_base,
    }


@router.get("/bench", response_class=HTMLResponse)
async def bench_list(request: Request, ctx: Ctx) -> HTMLResponse:
    """Every result folder under the server's bench folders."""
    entries = await asyncio.to_thread(_listing, ctx)
    return page(request, "bench_list.html", {"entries": entries, "bench_dirs": ctx.options.bench_dirs})


@router.get("/bench/{name}", response_class=HTMLResponse)
async def bench_page(name: str, request: Request, ctx: Ctx) -> HTMLResponse:
    """One result folder: its report, plots and every problem's result per strategy."""
    folder = await asyncio.to_thread(_folder, ctx, name)
    if folder is None:
        message = f"no result folder named {name!r} under the server's bench folders"
        return page(request, "not_found.html", {"what": "benchmark", "message": message}, status_code=404)
    context = await asyncio.to_thread(_detail, folder, root_of(request))
    return page(request, "bench.html", context)


@router.get("/bench/{name}/files/{filename}")
async def bench_file(name: str, filename: str, ctx: Ctx) -> Response:
    """A plot or result file directly inside result folder ``name``; 404 for anything else."""
    folder = await asyncio.to_thread(_folder, ctx, name)
    target = await asyncio.to_thread(served_file, folder, filename) if folder is not None else None
    if target is None:
        return Response("not found\n", status_code=404, media_type="text/plain", headers=dict(SECURITY_HEADERS))
    return FileResponse(target, media_type=SERVED_TYPES[target.suffix.lower()], headers=dict(SECURITY_HEADERS))
