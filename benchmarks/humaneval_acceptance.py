"""Issue 32's acceptance lines, read off a recorded HumanEval run's folder: each target, what was measured, met or not.

It reads the run's ``results.jsonl`` (single, reflexion and debate rows), its ``vote-samples.jsonl`` (vote@N
is the shared ranking over each problem's first N samples, as ``bench humaneval`` scores it) and, when given,
the wall-time log of ``benchmarks/humaneval_recorded.sh``. Coverage reads only the problems' prompts. Every
line is a report of hidden-test outcomes: never a tuning signal.

A second table gives each strategy's passes on the design set (HumanEval/0 to ``--split`` - 1, where the
configuration was chosen) apart from the held-out rest, with the debate's McNemar test against each on
the held-out problems alone.

    .venv/bin/python benchmarks/humaneval_acceptance.py benchmarks/results/humaneval-qwen-v3 \\
        --wall /work/runs/v3-wall.log
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debatecode.bench._stats import paired_test
from debatecode.bench.humaneval.problems import load_problems, problem_task
from debatecode.bench.humaneval.vote import read_vote_samples, vote_at

NON_DEBATE = ("single", "reflexion")
"""Strategies read from results.jsonl besides the debate; vote@N comes from the samples."""


@dataclass(frozen=True)
class Line:
    target: str
    measured: str
    met: bool | None
    """None: not measurable from this folder yet."""


def passes(rows: Sequence[Mapping[str, Any]], strategy: str) -> dict[str, bool]:
    """Per problem, whether ``strategy``'s answer passed (the last row of a problem wins, as a resumed run appends)."""
    return {str(r["task_id"]): bool(r["passed"]) for r in rows if r.get("strategy") == strategy}


def mean_tokens(rows: Sequence[Mapping[str, Any]], strategy: str) -> float:
    chosen = {str(r["task_id"]): int(r.get("tokens", 0)) for r in rows if r.get("strategy") == strategy}
    return sum(chosen.values()) / len(chosen) if chosen else 0.0


def vote_passes(samples: Mapping[str, list[dict[str, Any]]], n: int) -> tuple[dict[str, bool], float]:
    """vote@``n``'s verdict per problem and its mean spent tokens."""
    votes = {task: vote_at(drawn, n) for task, drawn in samples.items() if drawn}
    tokens = sum(v["tokens"] for v in votes.values()) / len(votes) if votes else 0.0
    return {task: bool(v["passed"]) for task, v in votes.items()}, tokens


def drawn(samples: Mapping[str, list[dict[str, Any]]]) -> tuple[int, int]:
    """The fewest and the most samples drawn for one problem so far."""
    counts = [len(found) for found in samples.values() if found]
    return (min(counts), max(counts)) if counts else (0, 0)


def per_sample_tokens(samples: Mapping[str, list[dict[str, Any]]]) -> float:
    """The mean tokens of one vote sample over every sample drawn."""
    every = [int(s["tokens"]) for found in samples.values() for s in found]
    return sum(every) / len(every) if every else 0.0


def matched_vote_n(samples: Mapping[str, list[dict[str, Any]]], debate_tokens: float) -> int | None:
    """The samples whose mean spend meets the debate's, from one sample's mean tokens; None without either."""
    per_sample = per_sample_tokens(samples)
    return max(1, round(debate_tokens / per_sample)) if per_sample and debate_tokens else None


REPORTED_VOTE_N = re.compile(r"^\| vote \| N = (\d+) \|", re.MULTILINE)
"""The bench's choice in ``report.md``'s equal-spend table: ``| vote | N = 14 | ...``."""


def reported_vote_n(folder: Path) -> int | None:
    """The vote N the bench's spend matching chose, read from its ``report.md``; None before it is written."""
    report = folder / "report.md"
    found = REPORTED_VOTE_N.search(report.read_text(encoding="utf-8")) if report.is_file() else None
    return int(found.group(1)) if found else None


def matched_n_for(folder: Path, samples: Mapping[str, list[dict[str, Any]]], debate_tokens: float) -> int | None:
    """vote's N at the debate's spend: the bench's own choice once it has reported, else the estimate."""
    return reported_vote_n(folder) or matched_vote_n(samples, debate_tokens)


def vote_name(n: int, samples: Mapping[str, list[dict[str, Any]]], finished: bool) -> str:
    """``vote@n``, said so only when every problem has ``n`` samples or the run has ended (a budget may stop it)."""
    fewest, most = drawn(samples)
    if finished or fewest >= n:
        return f"vote@{n}"
    return f"vote@{n} so far ({fewest}-{most} samples per problem drawn)"


def finished_run(folder: Path) -> bool:
    """The bench writes ``report.md`` only when every strategy, vote's draws and the spend matching are done."""
    return (folder / "report.md").is_file()


def wall_hours(log: Path, now: float | None = None) -> float:
    """The computed hours in a ``humaneval_recorded.sh`` wall log: the sum of its start-stop intervals.

    A last start with no stop yet (the run is going) counts up to ``now`` (default: the clock), as the script's
    ``status`` does.
    """
    total, started = 0.0, None
    for line in log.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "start":
            started = int(parts[1])
        elif len(parts) >= 2 and parts[0] == "stop" and started is not None:
            total += int(parts[1]) - started
            started = None
    if started is not None:
        total += max(0.0, (time.time() if now is None else now) - started)
    return total / 3600


def rate(verdicts: Mapping[str, bool]) -> str:
    passed = sum(verdicts.values())
    return f"{passed}/{len(verdicts)} ({100 * passed / max(1, len(verdicts)):.1f}%)"


def acceptance(folder: Path, wall: Path | None, problems: Sequence[Mapping[str, Any]]) -> list[Line]:
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines() if line.strip()]
    samples_path = folder / "vote-samples.jsonl"
    samples = read_vote_samples(samples_path) if samples_path.is_file() else {}
    finished = finished_run(folder)
    covered = sum(1 for p in problems if problem_task(dict(p)).examples)
    lines = [Line(">= 155/164 problems with a visible test", f"{covered}/{len(problems)}", covered >= 155)]
    single = passes(rows, "single")
    lines.append(
        Line(
            "single greedy >= 60%",
            rate(single),
            (sum(single.values()) >= 0.6 * len(problems)) if len(single) == len(problems) else None,
        )
    )
    vote10, vote10_tokens = vote_passes(samples, 10)
    vote10_name = vote_name(10, samples, finished)
    lines.append(
        Line(
            "vote@10 (shared ranking) >= 72%",
            f"{vote10_name}: {rate(vote10)}, {vote10_tokens:,.0f} tokens per problem",
            (sum(vote10.values()) >= 0.72 * len(problems))
            if len(vote10) == len(problems) and vote10_name == "vote@10"
            else None,
        )
    )
    debate = passes(rows, "debate")
    debate_tokens = mean_tokens(rows, "debate")
    complete = len(debate) == len(problems)
    lines.append(
        Line(
            "debate >= 75% on all 164",
            f"{rate(debate)}, {debate_tokens:,.0f} tokens per problem",
            (sum(debate.values()) >= 0.75 * len(problems)) if complete else None,
        )
    )
    rivals: dict[str, tuple[dict[str, bool], float]] = {
        name: (passes(rows, name), mean_tokens(rows, name)) for name in NON_DEBATE
    }
    matched_n = matched_n_for(folder, samples, debate_tokens)
    if matched_n is not None:
        rivals[f"{vote_name(matched_n, samples, finished)} (matched spend)"] = vote_passes(samples, matched_n)
    best_name, (best, best_tokens) = max(rivals.items(), key=lambda item: sum(item[1][0].values()))
    test = paired_test("debate", debate, best_name, best)
    lines.append(
        Line(
            "debate ahead of the best non-debate strategy at matched spend, McNemar p < 0.05",
            f"best other: {best_name} {rate(best)} at {best_tokens:,.0f} tokens; debate {test.b} wins, "
            f"{test.c} losses, p = {test.p:.2g}",
            (test.b > test.c and test.p < 0.05) if complete and finished and len(best) == len(problems) else None,
        )
    )
    if wall is not None and wall.is_file():
        hours = wall_hours(wall)
        lines.append(
            Line(
                "the whole run <= 8 h of wall time",
                f"{hours:.2f} h computed" + ("" if finished else ", still running (no report.md yet)"),
                (hours <= 8) if finished else (False if hours > 8 else None),  # it only grows
            )
        )
    return lines


def task_number(task: str) -> int:
    return int(task.rsplit("/", 1)[1])


def strategies(folder: Path) -> dict[str, tuple[dict[str, bool], float]]:
    """Every strategy's verdicts and mean tokens: the results rows, and vote@5, vote@10 and vote at the debate's spend."""
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines() if line.strip()]
    samples_path = folder / "vote-samples.jsonl"
    samples = read_vote_samples(samples_path) if samples_path.is_file() else {}
    finished = finished_run(folder)
    found = {name: (passes(rows, name), mean_tokens(rows, name)) for name in ("single", "reflexion")}
    debate_tokens = mean_tokens(rows, "debate")
    matched_n = matched_n_for(folder, samples, debate_tokens)
    wanted = [5, 10] if matched_n is None else [5, 10, matched_n]
    for n in dict.fromkeys(wanted):
        found.setdefault(vote_name(n, samples, finished), vote_passes(samples, n))
    found["debate"] = (passes(rows, "debate"), debate_tokens)
    return {name: found_ for name, found_ in found.items() if found_[0]}


def split_table(folder: Path, cut: int) -> list[str]:
    """Markdown: passes per strategy on HumanEval/0..cut-1 and on the rest, and the debate against each there."""
    found = strategies(folder)
    debate = found.get("debate", ({}, 0.0))[0]
    lines = [
        f"| strategy | HumanEval/0-{cut - 1} (design) | held-out {cut}-163 | all | mean tokens "
        f"| debate on held-out: wins / losses, McNemar p |",
        "|---|---|---|---|---|---|",
    ]
    for name, (verdicts, tokens) in found.items():
        design = {t: v for t, v in verdicts.items() if task_number(t) < cut}
        held = {t: v for t, v in verdicts.items() if task_number(t) >= cut}
        versus = "-"
        if name != "debate":
            shared = {t: v for t, v in held.items() if t in debate}
            if shared:
                test = paired_test("debate", {t: debate[t] for t in shared}, name, shared)
                versus = f"{test.b} / {test.c}, p = {test.p:.2g}"
        lines.append(f"| {name} | {rate(design)} | {rate(held)} | {rate(verdicts)} | {tokens:,.0f} | {versus} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a recorded run's results folder (results.jsonl, vote-samples.jsonl)")
    parser.add_argument("--wall", type=Path, help="the run's wall-time log (humaneval_recorded.sh)")
    parser.add_argument("--split", type=int, default=40, help="the first held-out problem (default: 40)")
    args = parser.parse_args()
    if not (args.folder / "results.jsonl").is_file():
        print(f"error: {args.folder} has no results.jsonl; give a recorded run's results folder", file=sys.stderr)
        return 2
    lines = acceptance(args.folder, args.wall, load_problems())
    print("| target | measured | met |\n|---|---|---|")
    for line in lines:
        verdict = "not yet measurable" if line.met is None else ("**yes**" if line.met else "**no**")
        print(f"| {line.target} | {line.measured} | {verdict} |")
    print()
    print("\n".join(split_table(args.folder, args.split)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
