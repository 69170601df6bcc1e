"""Where a debate's lost problems were lost: every candidate it wrote, scored on the hidden tests after the run.

Usage: .venv/bin/python benchmarks/debate_headroom.py RESULTS_FOLDER [--strategy debate] [--sandbox docker] [--from-cache]

RESULTS_FOLDER is a ``bench humaneval`` folder. For each of the strategy's rows in its ``results.jsonl``,
the session's version history (``runs/<strategy>/<problem>/``, branch ``debate/<session>``) holds every
candidate version an agent wrote (``candidates/<agent>.py``, with its phase, round and visible-test count
in the commit's trailers). Each distinct version is run against the problem's hidden tests in the sandbox,
and each problem the strategy failed is put in one of three classes:

- **selection**: some candidate passed the hidden tests, but another became the answer;
- **weak visible tests**: no candidate passed, yet the answer passed every visible test (the tests the
  debate could see did not tell right from wrong);
- **generation**: no candidate passed, and the answer failed a visible test (the model never wrote it).

The three classes bound what a better protocol could gain without a stronger model: selection losses are
recoverable by choosing better among what was written; the other two need more (or better) tests, or
better drafts. Writes ``headroom.md`` and ``headroom-candidates.jsonl`` (every scored version, reused by a
re-run) into RESULTS_FOLDER.

This reads hidden-test outcomes: it is analysis after a recorded run, never a tuning signal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from debatecode.bench.humaneval import check_samples, load_problems
from debatecode.bench.humaneval.results_folder import slug
from debatecode.config import DebateConfig
from debatecode.errors import VersionControlError
from debatecode.sandbox import create_sandbox
from debatecode.vcs import VersionRepository

SELECTION = "selection"
WEAK_TESTS = "weak visible tests"
GENERATION = "generation"
CLASSES = (SELECTION, WEAK_TESTS, GENERATION)


@dataclass(frozen=True)
class Candidate:
    """One version an agent committed during a session."""

    task_id: str
    agent: str
    phase: str
    round: str
    visible: str
    """The ``Tests`` trailer: visible tests passed / run, e.g. ``2/3``; empty when none ran."""
    code: str

    @property
    def passes_visible(self) -> bool:
        passed, _, total = self.visible.partition("/")
        return bool(total) and passed == total


@dataclass
class Problem:
    """A problem the strategy answered, its answer's verdicts, and its candidates' hidden verdicts."""

    task_id: str
    passed: bool
    answer_passes_visible: bool
    candidates: list[Candidate] = field(default_factory=list)
    hidden: dict[str, bool] = field(default_factory=dict)
    """Hidden-test verdict per distinct candidate code."""

    @property
    def distinct(self) -> int:
        return len({c.code for c in self.candidates})

    @property
    def any_candidate_passes(self) -> bool:
        return any(self.hidden.get(c.code, False) for c in self.candidates)

    @property
    def loss(self) -> str | None:
        """Why the problem was lost (one of ``CLASSES``), or None when the answer passed."""
        if self.passed:
            return None
        if self.any_candidate_passes:
            return SELECTION
        return WEAK_TESTS if self.answer_passes_visible else GENERATION

    @property
    def right_and_visibly_right(self) -> bool:
        """Some candidate passed both the hidden tests and every visible test."""
        return any(self.hidden.get(c.code, False) and c.passes_visible for c in self.candidates)


def read_rows(folder: Path, strategy: str) -> list[dict[str, Any]]:
    path = folder / "results.jsonl"
    if not path.is_file():
        raise SystemExit(f"{path} does not exist: give a `bench humaneval` results folder")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if row.get("strategy") == strategy]


def session_candidates(folder: Path, strategy: str, row: Mapping[str, Any]) -> list[Candidate]:
    """Every candidate version committed on the row's session branch, oldest first."""
    task_id = str(row["task_id"])
    repo_path = folder / "runs" / strategy / slug(task_id)
    branch = f"debate/{row['session_id']}"
    try:
        repo = VersionRepository(repo_path, create=False)
    except VersionControlError as exc:
        raise SystemExit(f"{task_id}: no version history: {exc}") from exc
    found: list[Candidate] = []
    with repo:
        for commit in reversed(repo.log(branch)):
            trailers = commit.trailers
            agent = trailers.get("Agent")
            if not agent:
                continue
            try:
                code = repo.show_file(f"candidates/{agent}.py", commit.sha)
            except VersionControlError:
                continue  # the commit wrote another of the agent's files (a pseudo-code variant) first
            found.append(
                Candidate(
                    task_id=task_id,
                    agent=agent,
                    phase=trailers.get("Phase", ""),
                    round=trailers.get("Round", ""),
                    visible=trailers.get("Tests", ""),
                    code=code,
                )
            )
    return found


def cached_candidates(path: Path) -> dict[str, list[Candidate]]:
    """The candidates scored in an earlier run's cache, per problem, for ``--from-cache``.

    The cache keeps each distinct code and its hidden verdict, not who wrote it or its visible-test count, so
    these candidates carry no agent, phase, round or ``Tests`` trailer.
    """
    if not path.is_file():
        raise SystemExit(f"{path} does not exist: --from-cache needs the cache an earlier run wrote")
    found: dict[str, list[Candidate]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            task_id = str(record["task_id"])
            found.setdefault(task_id, []).append(
                Candidate(task_id=task_id, agent="", phase="", round="", visible="", code=str(record["solution"]))
            )
    return found


def read_cache(path: Path) -> dict[tuple[str, str], bool]:
    if not path.is_file():
        return {}
    cache = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            cache[(record["task_id"], record["solution"])] = bool(record["passed"])
    return cache


async def score_missing(
    problems: Sequence[Problem],
    cache: dict[tuple[str, str], bool],
    cache_path: Path,
    by_id: Mapping[str, Mapping[str, Any]],
    backend: str | None,
) -> None:
    """Run every candidate code not yet in ``cache`` against its hidden tests; append each verdict to the cache file."""
    todo = sorted({(c.task_id, c.code) for p in problems for c in p.candidates} - cache.keys())
    if todo:
        print(f"scoring {len(todo)} candidate versions on the hidden tests", file=sys.stderr)
        settings = DebateConfig().sandbox
        async with create_sandbox(settings, backend or settings.backend) as box:
            samples = [{"task_id": task_id, "solution": code} for task_id, code in todo]
            verdicts = await check_samples(box, by_id, samples)
        with cache_path.open("a", encoding="utf-8") as handle:
            for sample, verdict in zip(samples, verdicts, strict=True):
                cache[(sample["task_id"], sample["solution"])] = verdict.passed
                handle.write(json.dumps({**sample, "passed": verdict.passed, "result": verdict.result}) + "\n")
    for problem in problems:
        problem.hidden = {c.code: cache[(problem.task_id, c.code)] for c in problem.candidates}


def paired(problems: Iterable[Problem], reference: Mapping[str, bool]) -> tuple[list[Problem], list[Problem]]:
    """(problems the reference strategy passed and this one failed, the reverse)."""
    lost = [p for p in problems if p.task_id in reference and reference[p.task_id] and not p.passed]
    won = [p for p in problems if p.task_id in reference and not reference[p.task_id] and p.passed]
    return lost, won


def _pct(n: int, total: int) -> str:
    return f"{n}/{total} ({100 * n / total:.1f}%)" if total else "0/0"


def report(
    strategy: str, problems: Sequence[Problem], reference: Mapping[str, bool], command: str, *, histories: bool = True
) -> str:
    total = len(problems)
    passed = sum(p.passed for p in problems)
    oracle = sum(p.passed or p.any_candidate_passes for p in problems)
    failed = [p for p in problems if not p.passed]
    counts = {name: [p for p in failed if p.loss == name] for name in CLASSES}
    selection = counts[SELECTION]
    lines = [
        f"# Headroom of `{strategy}`: where its lost problems were lost",
        "",
        f"Command: `{command}`",
        "",
        "Every distinct candidate version the agents committed (the session's version history) was run against"
        " the problem's hidden tests after the run. This reads hidden-test outcomes: analysis, never a tuning signal."
        + (
            ""
            if histories
            else " Here the candidates and their verdicts come from `headroom-candidates.jsonl`, the cache an"
            " earlier run of this script wrote from the version histories (`--from-cache`)."
        ),
        "",
        "| | problems |",
        "|---|---|",
        f"| answered | {total} |",
        f"| answer passes the hidden tests (pass@1) | {_pct(passed, total)} |",
        f"| some candidate or the answer passes (oracle choice) | {_pct(oracle, total)} |",
        f"| mean distinct candidate versions per problem | {sum(p.distinct for p in problems) / max(total, 1):.1f} |",
        "",
        "## Why the failed problems failed",
        "",
        "| class | meaning | problems | of the failed |",
        "|---|---|---|---|",
        f"| {SELECTION} | a candidate passed the hidden tests; another became the answer | {len(selection)}"
        f" | {_pct(len(selection), len(failed))} |",
        f"| {WEAK_TESTS} | no candidate passed; the answer passed every visible test | {len(counts[WEAK_TESTS])}"
        f" | {_pct(len(counts[WEAK_TESTS]), len(failed))} |",
        f"| {GENERATION} | no candidate passed; the answer failed a visible test | {len(counts[GENERATION])}"
        f" | {_pct(len(counts[GENERATION]), len(failed))} |",
        "",
        (
            f"Of the {len(selection)} selection losses, {sum(p.right_and_visibly_right for p in selection)} had a"
            " right candidate that also passed every visible test, and the answer"
            if histories
            else f"Of the {len(selection)} selection losses (which of their right candidates passed every visible"
            " test is in the version histories, not in the cache), the answer"
        )
        + f" passed every visible test in {sum(p.answer_passes_visible for p in selection)}: there the visible tests"
        " could not separate right from wrong, and only more tests (or a vote among passing candidates) would choose"
        " better.",
    ]
    if selection:
        lines += ["", "Selection losses: " + ", ".join(p.task_id for p in selection) + "."]
    if reference:
        lost, won = paired(problems, reference)
        lines += [
            "",
            "## Against single (greedy) on the same problems",
            "",
            f"{strategy} passed {len(won)} problems single failed, and failed {len(lost)} single passed.",
        ]
        if lost:
            by_class = {name: [p.task_id for p in lost if p.loss == name] for name in CLASSES}
            lines += [
                "",
                "| class | problems single passed and this failed |",
                "|---|---|",
                *(f"| {name} | {len(ids)}: {', '.join(ids) or '-'} |" for name, ids in by_class.items()),
            ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a `bench humaneval` results folder")
    parser.add_argument("--strategy", default="debate", help="whose rows and histories to read (default: debate)")
    parser.add_argument("--sandbox", default=None, help="sandbox backend for the hidden tests (default: config's)")
    parser.add_argument(
        "--from-cache",
        action="store_true",
        help="take the candidates from headroom-candidates.jsonl instead of the version histories (runs/), e.g."
        " in a recorded folder that does not keep them; runs nothing new",
    )
    args = parser.parse_args(argv)
    folder: Path = args.folder
    rows = read_rows(folder, args.strategy)
    if not rows:
        raise SystemExit(f"{folder / 'results.jsonl'} has no {args.strategy} rows")
    cache_path = folder / "headroom-candidates.jsonl"
    cached = cached_candidates(cache_path) if args.from_cache else {}
    problems = [
        Problem(
            task_id=str(row["task_id"]),
            passed=bool(row["passed"]),
            answer_passes_visible=bool(row.get("visible")) and row["visible"][0] == row["visible"][1],
            candidates=(
                cached.get(str(row["task_id"]), [])
                if args.from_cache
                else session_candidates(folder, args.strategy, row)
            ),
        )
        for row in rows
    ]
    by_id = {p["task_id"]: p for p in load_problems(ids=[p.task_id for p in problems])}
    asyncio.run(score_missing(problems, read_cache(cache_path), cache_path, by_id, args.sandbox))
    singles = {row["task_id"]: bool(row["passed"]) for row in read_rows(folder, "single")}
    command = " ".join(["python benchmarks/debate_headroom.py", *(sys.argv[1:] if argv is None else argv)])
    text = report(args.strategy, problems, singles, command, histories=not args.from_cache)
    (folder / "headroom.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
