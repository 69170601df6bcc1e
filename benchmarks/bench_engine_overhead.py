"""P3, engine overhead per turn: scripted debates against a bare loop that writes the same rows, in one run.

Usage: .venv/bin/python benchmarks/bench_engine_overhead.py [--debates N] [--rounds R] [--concurrency C]
       [--folder DIR] [--postgres URL] [--profile] [--write]

Each round does two things, in alternating order so that background load hits both alike:

- **debate**: N scripted add.md debates (``tests.support.load``: a zero-latency
  ``scripted/...`` model, two agents, proposal, critique and convergence), C at a
  time, on the replaying dummy sandbox (each distinct job runs once, at warm-up),
  into a fresh store. The store records every write the engine makes. A round's
  debates share one output folder, and so one git repository with a worktree and
  a branch per session, as ``debatecode solve`` runs share ``debatecode-out``
  (``--out-per-debate``: a new folder and repository for each debate).
- **bare**: the same writes (the same sessions, turns, code versions, events and
  status updates, one transaction each, in the same order) replayed into another
  fresh store of the same kind, and nothing else.

Engine overhead per turn = (debate time − bare time) / stored turns; the target
is under 1 ms. It is given in wall time (the P3 figure) and in CPU time of this
process (all threads; less sensitive to a busy machine, and blind to child
processes such as git and ruff). The debate's wall time is also split by where
it went: inside store writes, git (the per-session repository and a commit per
version), the quality tools (ruff, radon, bandit) and the sandbox. Agents work in
parallel within a debate, so these parts overlap and need not add up. The CPU
spent in git's and the quality tools' calls is then taken out of the CPU
overhead, which leaves the engine's own Python. ``--profile`` adds a cProfile of
one more debate round, summed by area. ``--write`` records the table in
benchmarks/results/engine-overhead/<store>[-ram]-c<C>.md and .json.

The store is SQLite, in ``--folder`` (default: the temp dir; ``/dev/shm`` keeps
the disk's fsync out of both sides), unless ``--postgres`` names a PostgreSQL
server whose role may create databases: each store is then a new database,
dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import functools
import io
import json
import os
import platform
import pstats
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from tests.support.load import debate_config, run_debates, scripted_model  # noqa: E402
from tests.support.replay_sandbox import ReplaySandbox  # noqa: E402
from tests.support.scripted_solve import ADD_TASK  # noqa: E402

from debatecode import Services  # noqa: E402
from debatecode.llm.client import LLMClient  # noqa: E402
from debatecode.llm.settings import LLMSettings  # noqa: E402
from debatecode.quality import analyzer  # noqa: E402
from debatecode.store import SessionStore  # noqa: E402
from debatecode.task import load_task  # noqa: E402
from debatecode.vcs.worktree import SessionWorktree, VersionRepository  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "engine-overhead"
TARGET_MS = 1.0
QUALITY = "quality (ruff, radon, bandit)"
WRITES = ("create_session", "update_session", "add_turn", "add_code_version", "add_event", "add_gate", "decide_gate")
T = TypeVar("T")


class Stopwatch:
    """Wall time, and CPU time of the calling thread, spent inside wrapped (synchronous) calls, by category."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self._lock = threading.Lock()  # wrapped calls run on the event loop and on worker threads

    def wrap(self, category: str, call: Callable[..., T], *, cpu: bool = True) -> Callable[..., T]:
        """``call``, timed under ``category``; its thread's CPU time too unless ``cpu`` is false (a cheaper clock)."""

        @functools.wraps(call)
        def timed(*args: Any, **kwargs: Any) -> T:
            wall, used = time.perf_counter(), time.thread_time() if cpu else 0.0
            try:
                return call(*args, **kwargs)
            finally:
                self.add(category, time.perf_counter() - wall, time.thread_time() - used if cpu else 0.0)

        return timed

    def add(self, category: str, wall_s: float, cpu_s: float = 0.0) -> None:
        with self._lock:
            self.seconds[category] += wall_s
            self.cpu_seconds[category] += cpu_s


class RecordingStore(SessionStore):
    """A ``SessionStore`` that keeps every write it is asked for, to be replayed by the bare loop, and times them."""

    def __init__(self, url: str, stopwatch: Stopwatch) -> None:
        super().__init__(url)
        self.writes: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        for name in WRITES:
            setattr(self, name, stopwatch.wrap("store writes", self._recorded(name), cpu=False))

    def _recorded(self, name: str) -> Callable[..., Any]:
        write = getattr(super(), name)

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.writes.append((name, args, kwargs))
            return write(*args, **kwargs)

        return recorded


TIMED: tuple[tuple[object, str, str], ...] = (
    (VersionRepository, "__init__", "git"),
    (VersionRepository, "open_session", "git"),
    (SessionWorktree, "commit_version", "git"),
    (SessionWorktree, "diff_from_previous", "git"),
    (SessionWorktree, "close", "git"),
    (analyzer, "analyze", QUALITY),
)
"""What the split times besides the store and the sandbox: (owner, attribute, category); all run in worker threads."""


@contextlib.contextmanager
def timed_calls(stopwatch: Stopwatch) -> Iterator[None]:
    """Count the wall time of the git work and the quality analysis (``TIMED``) while the block runs."""
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in TIMED]
    for (owner, name, original), (_, _, category) in zip(originals, TIMED, strict=True):
        setattr(owner, name, stopwatch.wrap(category, original))
    try:
        yield
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)


class Stores:
    """Fresh, empty stores of one kind: SQLite files in a folder, or PostgreSQL databases (dropped on close)."""

    def __init__(self, folder: Path, postgres: str | None) -> None:
        self.folder = folder
        self.kind = "postgresql" if postgres else "sqlite"
        self._admin = create_engine(postgres, isolation_level="AUTOCOMMIT") if postgres else None
        self._made: list[str] = []

    def new_url(self) -> str:
        name = f"bench_overhead_{uuid.uuid4().hex[:12]}"
        if self._admin is None:
            return f"sqlite:///{self.folder / (name + '.db')}"
        with self._admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        self._made.append(name)
        return make_url(self._admin.url).set(database=name).render_as_string(hide_password=False)

    def close(self) -> None:
        if self._admin is None:
            return
        with self._admin.connect() as conn:
            for name in self._made:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self._admin.dispose()


Writes = list[tuple[str, tuple[Any, ...], dict[str, Any]]]
"""Store writes as (method name, args, kwargs), in the order the engine made them."""


@dataclass(frozen=True)
class Elapsed:
    """Wall time, and the CPU time of this process (all its threads; git's child processes not included)."""

    wall_s: float
    cpu_s: float


@contextlib.contextmanager
def clock(into: list[Elapsed]) -> Iterator[None]:
    """Append the wall and CPU time the ``with`` block took to ``into``."""
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        into.append(Elapsed(time.perf_counter() - wall, time.process_time() - cpu))


@dataclass
class Round:
    debate: Elapsed
    bare: Elapsed
    turns: int
    versions: int
    events: int
    writes: int
    split_s: dict[str, float]
    """Wall time of the debate inside store writes, git, the quality tools and the sandbox."""
    split_cpu_s: dict[str, float]
    """CPU time of the threads that ran them, inside the same calls (not the sandbox's)."""

    def own_cpu_overhead_ms(self) -> float:
        """The CPU overhead per turn left to the engine once git's and the quality tools' CPU is taken out."""
        outside = self.split_cpu_s.get("git", 0.0) + self.split_cpu_s.get(QUALITY, 0.0)
        return (self.debate.cpu_s - self.bare.cpu_s - outside) / self.turns * 1000

    def overhead_ms(self, kind: str = "wall") -> float:
        attr = f"{kind}_s"
        return (getattr(self.debate, attr) - getattr(self.bare, attr)) / self.turns * 1000


def replay(writes: Writes, url: str) -> Elapsed:
    """The time to apply ``writes`` to a fresh store at ``url`` (opened and migrated before the clock starts)."""
    timing: list[Elapsed] = []
    with SessionStore(url) as store:
        methods = {name: getattr(store, name) for name in WRITES}
        with clock(timing):
            for name, args, kwargs in writes:
                methods[name](*args, **kwargs)
    return timing[0]


async def debate_round(
    model: str,
    stores: Stores,
    sandbox: ReplaySandbox,
    count: int,
    concurrency: int,
    out: Path,
    out_per_debate: bool = False,
) -> tuple[Elapsed, RecordingStore, Stopwatch, int]:
    """Run ``count`` debates into a fresh recording store: the time, the store, the split and the stored turns.

    The debates of a round share one output folder (one git repository, a worktree and a branch per session),
    as ``debatecode solve`` runs share ``debatecode-out``; with ``out_per_debate`` each debate gets a folder, and
    so a new repository, of its own.
    """
    url = stores.new_url()
    stopwatch = Stopwatch()
    store = RecordingStore(url, stopwatch)
    services = Services(llm=LLMClient(LLMSettings()), sandbox=sandbox, store=store)
    task = load_task(ADD_TASK)
    shared = out / uuid.uuid4().hex[:8]
    configs = [
        debate_config(model, url, out / uuid.uuid4().hex[:8] if out_per_debate else shared) for _ in range(count)
    ]
    sandbox_run = sandbox.run

    async def timed_run(job: Any) -> Any:
        started = time.perf_counter()
        try:
            return await sandbox_run(job)
        finally:
            stopwatch.add("sandbox", time.perf_counter() - started)

    sandbox.run = timed_run  # type: ignore[method-assign]
    timing: list[Elapsed] = []
    try:
        with timed_calls(stopwatch), clock(timing):
            outcomes = await run_debates(count, services, configs.__getitem__, concurrency=concurrency, task=task)
    finally:
        del sandbox.run
    failed = [o for o in outcomes if isinstance(o, BaseException) or o.status != "completed"]
    if failed:
        sys.exit(f"{len(failed)} debates did not complete: {failed[:3]}")
    turns = sum(len(store.turns(o.session.id)) for o in outcomes if not isinstance(o, BaseException))
    return timing[0], store, stopwatch, turns


async def one_round(
    model: str, stores: Stores, sandbox: ReplaySandbox, args: argparse.Namespace, out: Path, previous: Writes | None
) -> tuple[Round, Writes]:
    """One debate round and one bare loop; the bare loop goes first (on the previous round's writes) when given them."""
    bare = await asyncio.to_thread(replay, previous, stores.new_url()) if previous else None
    debate, store, stopwatch, turns = await debate_round(
        model, stores, sandbox, args.debates, args.concurrency, out, args.out_per_debate
    )
    store.close()
    if bare is None:
        bare = await asyncio.to_thread(replay, store.writes, stores.new_url())
    count: dict[str, int] = defaultdict(int)
    for name, _, _ in store.writes:
        count[name] += 1
    measured = Round(
        debate=debate,
        bare=bare,
        turns=turns,
        versions=count["add_code_version"],
        events=count["add_event"] + sum(1 for _, _, kwargs in store.writes if kwargs.get("event") is not None),
        writes=len(store.writes),
        split_s=dict(stopwatch.seconds),
        split_cpu_s=dict(stopwatch.cpu_seconds),
    )
    return measured, store.writes


async def measure(args: argparse.Namespace, stores: Stores, out: Path) -> tuple[list[Round], str]:
    sandbox = ReplaySandbox()
    profile_text = ""
    with scripted_model() as model:
        await debate_round(model, stores, sandbox, 2, 1, out)  # warm-up: imports, caches, the sandbox's real runs
        rounds: list[Round] = []
        writes = None
        for index in range(args.rounds):
            # Alternate which goes first; a bare loop that goes first replays the previous round's writes.
            r, writes = await one_round(model, stores, sandbox, args, out, writes if index % 2 == 1 else None)
            rounds.append(r)
            print(
                f"round {index + 1}: debate {r.debate.wall_s:.2f} s (CPU {r.debate.cpu_s:.2f}), "
                f"bare {r.bare.wall_s:.2f} s (CPU {r.bare.cpu_s:.2f}), {r.turns} turns, "
                f"overhead {r.overhead_ms():.2f} ms/turn (CPU {r.overhead_ms('cpu'):.2f}), "
                f"load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            await debate_round(model, stores, sandbox, args.debates, args.concurrency, out, args.out_per_debate)
            profiler.disable()
            buffer = io.StringIO()
            stats = pstats.Stats(profiler, stream=buffer)
            total = sum(own for _, own in own_time_by_area(stats))
            buffer.write("Own time by area:\n")
            for name, own in own_time_by_area(stats):
                buffer.write(f"  {own:7.3f} s  {own / total:6.1%}  {name}\n")
            buffer.write("\n")
            stats.sort_stats("tottime").print_stats(30)
            profile_text = buffer.getvalue()
    return rounds, profile_text


AREAS = (
    ("select.epoll", "waiting: git and sandbox threads, subprocesses (epoll)"),
    ("sqlite3", "sqlite3 C calls (commit, execute)"),
    ("pydantic", "pydantic"),
    ("/sqlalchemy/", "SQLAlchemy"),
    ("/alembic/", "alembic (store opening)"),
    ("/json/", "json"),
    ("/jinja2/", "jinja2 (prompts, report)"),
    ("/asyncio/", "asyncio"),
    ("/git/", "GitPython"),
    ("/tests/support/", "test rig (scripted model, replay sandbox)"),
)


def area(filename: str, function: str) -> str:
    """Which part of the stack a profiled function belongs to."""
    where = f"{filename} {function}"
    for needle, name in AREAS:
        if needle in where:
            return name
    if "/debatecode/" in filename:
        package = filename.split("/debatecode/", 1)[1].split("/", 1)[0].removesuffix(".py")
        return f"debatecode.{package}"
    return "other (stdlib, builtins)"


def own_time_by_area(stats: pstats.Stats) -> list[tuple[str, float]]:
    """Own (not cumulative) profiled time summed by ``area``, largest first."""
    totals: dict[str, float] = defaultdict(float)
    for (filename, _line, function), (_cc, _nc, own, _cum, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        totals[area(filename, function)] += own
    return sorted(totals.items(), key=lambda item: -item[1])


def summary(rounds: list[Round], args: argparse.Namespace, kind: str) -> dict[str, Any]:
    turns = rounds[0].turns
    debate = statistics.median(r.debate.wall_s for r in rounds)
    bare = statistics.median(r.bare.wall_s for r in rounds)
    debate_cpu = statistics.median(r.debate.cpu_s for r in rounds)
    bare_cpu = statistics.median(r.bare.cpu_s for r in rounds)
    categories = ("store writes", "git", QUALITY, "sandbox")
    split = {name: statistics.median(r.split_s.get(name, 0.0) for r in rounds) for name in categories}
    return {
        "store": kind,
        "folder": args.folder or tempfile.gettempdir(),
        "debates": args.debates,
        "concurrency": args.concurrency,
        "out_per_debate": args.out_per_debate,
        "rounds": [
            {
                "debate": asdict(r.debate),
                "bare": asdict(r.bare),
                "turns": r.turns,
                "writes": r.writes,
                "split_s": r.split_s,
                "split_cpu_s": r.split_cpu_s,
                "overhead_ms": r.overhead_ms(),
                "cpu_overhead_ms": r.overhead_ms("cpu"),
                "own_cpu_overhead_ms": r.own_cpu_overhead_ms(),
            }
            for r in rounds
        ],
        "turns": turns,
        "per_debate": {
            "turns": turns / args.debates,
            "versions": rounds[0].versions / args.debates,
            "events": rounds[0].events / args.debates,
            "writes": rounds[0].writes / args.debates,
        },
        "debate_ms_per_turn": debate / turns * 1000,
        "bare_ms_per_turn": bare / turns * 1000,
        "ratio": debate / bare,
        "overhead_ms_per_turn": statistics.median(r.overhead_ms() for r in rounds),
        "debate_cpu_ms_per_turn": debate_cpu / turns * 1000,
        "bare_cpu_ms_per_turn": bare_cpu / turns * 1000,
        "cpu_ratio": debate_cpu / bare_cpu,
        "cpu_overhead_ms_per_turn": statistics.median(r.overhead_ms("cpu") for r in rounds),
        "own_cpu_overhead_ms_per_turn": statistics.median(r.own_cpu_overhead_ms() for r in rounds),
        "target_ms": TARGET_MS,
        "met": statistics.median(r.overhead_ms() for r in rounds) < TARGET_MS,
        "split_ms_per_turn": {name: value / turns * 1000 for name, value in split.items()},
        "cpus": os.cpu_count(),
        "loadavg": os.getloadavg(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def rows(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(measure, ms per stored turn, ratio to the bare loop) rows of the result table."""
    bare, bare_cpu = result["bare_ms_per_turn"], result["bare_cpu_ms_per_turn"]
    verdict = "met" if result["met"] else "NOT met"
    found = [
        ("debate, wall (engine, store, git, quality tools, sandbox)", result["debate_ms_per_turn"], result["ratio"]),
        ("bare loop, wall (same rows, same store kind)", bare, 1.0),
        (
            f"**engine overhead, wall** (target < {TARGET_MS:g} ms: {verdict})",
            result["overhead_ms_per_turn"],
            result["overhead_ms_per_turn"] / bare,
        ),
        ("debate, CPU of this process", result["debate_cpu_ms_per_turn"], result["cpu_ratio"]),
        ("bare loop, CPU of this process", bare_cpu, 1.0),
        ("engine overhead, CPU", result["cpu_overhead_ms_per_turn"], result["cpu_overhead_ms_per_turn"] / bare_cpu),
        (
            "engine overhead, CPU, without git's and the quality tools' CPU",
            result["own_cpu_overhead_ms_per_turn"],
            result["own_cpu_overhead_ms_per_turn"] / bare_cpu,
        ),
    ]
    if result["concurrency"] == 1:  # with several debates at once, their calls overlap and the sums mean little
        found += [
            (f"debate wall time inside {name}", value, value / bare)
            for name, value in result["split_ms_per_turn"].items()
        ]
    return [(name, f"{ms:.2f}", f"{ratio:.2f}") for name, ms, ratio in found]


def title(result: dict[str, Any]) -> str:
    return (
        f"Engine overhead per turn ({result['store']} in {result['folder']}, {result['debates']} debates, "
        f"{result['concurrency']} at a time, "
        f"{'an output folder each' if result.get('out_per_debate') else 'one shared output folder'}, "
        f"median of {len(result['rounds'])} rounds)"
    )


def render(result: dict[str, Any]) -> Table:
    table = Table(title=title(result))
    table.add_column("measure")
    table.add_column("ms per stored turn", justify="right")
    table.add_column("× bare", justify="right")
    for name, ms, ratio in rows(result):
        bold = name.startswith("**")
        name = name.strip("*") if not bold else f"[bold]{name.replace('**', '')}[/]"
        table.add_row(name, f"[bold]{ms}[/]" if bold else ms, ratio)
    return table


def markdown(result: dict[str, Any], argv: list[str], profile_text: str) -> str:
    per = result["per_debate"]
    lines = [
        f"# {title(result)}",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_engine_overhead.py {' '.join(argv)}`",
        "",
        f"Machine: {result['cpus']} CPUs, {result['platform']}, Python {result['python']}; load average at the end "
        f"{' / '.join(f'{x:.2f}' for x in result['loadavg'])} (other work ran on the machine: read the ratios).",
        "",
        f"Per debate: {per['turns']:g} turns, {per['versions']:g} code versions, {per['events']:g} events, "
        f"{per['writes']:g} store writes (one transaction each; a turn, version or status change carries its event).",
        "",
        "| measure | ms per stored turn | × bare |",
        "|---|---|---|",
        *(f"| {name} | {ms} | {ratio} |" for name, ms, ratio in rows(result)),
        "",
        "Rounds: "
        + "; ".join(
            f"debate {r['debate']['wall_s']:.2f} s (CPU {r['debate']['cpu_s']:.2f}), "
            f"bare {r['bare']['wall_s']:.2f} s (CPU {r['bare']['cpu_s']:.2f})"
            for r in result["rounds"]
        ),
        "",
    ]
    if profile_text:
        lines += [
            "## cProfile of one more debate round (event-loop thread, by own time)",
            "",
            "```",
            profile_text.strip(),
            "```",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debates", type=int, default=20, help="debates per round (default 20)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the median is reported (default 3)")
    parser.add_argument("--concurrency", type=int, default=1, help="debates at a time (default 1: back to back)")
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL server to use instead of SQLite")
    parser.add_argument(
        "--folder",
        help="where the SQLite stores and the debates' git folders go (default: the temp dir; /dev/shm: RAM)",
    )
    parser.add_argument(
        "--out-per-debate",
        action="store_true",
        help="give each debate an output folder (a new git repository) of its own; by default a round's debates "
        "share one, as `debatecode solve` runs share debatecode-out",
    )
    parser.add_argument("--profile", action="store_true", help="also profile one debate round (cProfile)")
    parser.add_argument("--write", action="store_true", help="record the result in benchmarks/results/")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-overhead-", dir=args.folder) as tmp:
        stores = Stores(Path(tmp), args.postgres)
        try:
            rounds, profile_text = asyncio.run(measure(args, stores, Path(tmp) / "out"))
        finally:
            stores.close()
    result = summary(rounds, args, stores.kind)
    Console().print(render(result))
    if profile_text:
        print(profile_text)
    if args.write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        argv = [a if a != args.postgres else "$DEBATECODE_TEST_POSTGRES_URL" for a in sys.argv[1:]]
        place = "-ram" if args.folder and args.folder.startswith("/dev/shm") else ""
        name = f"{stores.kind}{place}-c{args.concurrency}{'-out-per-debate' if args.out_per_debate else ''}"
        (RESULTS / f"{name}.md").write_text(markdown(result, argv, profile_text), encoding="utf-8")
        (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"written to {RESULTS.relative_to(ROOT)}/{name}.md")


if __name__ == "__main__":
    main()
