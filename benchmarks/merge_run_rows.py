"""Merge a helper stream's finished HumanEval rows into the main run's folder, never as duplicates.

Usage: .venv/bin/python benchmarks/merge_run_rows.py HELPER_FOLDER MAIN_FOLDER [--strategy S]

Issue 12's recorded run is one ``bench humaneval`` folder that a re-run continues. When a core is free, a
second process (``benchmarks/recorded_runs.sh helper``) runs some of its problems from a clone of the
same commit into a folder of its own. With the main run stopped, this script appends to the main folder:

- the helper's ``results.jsonl`` rows whose (problem, strategy) main does not have (only strategy ``S``
  with ``--strategy``);
- the helper's ``vote-samples.jsonl`` lines whose (problem, sample index) main does not have;
- the helper's ``reflexion-attempts.jsonl`` lines (Reflexion run again at another attempt cap, for spend
  matching) whose (problem, attempt cap) main does not have.

The main run then skips those pairs and reuses those samples and runs. Rows both folders hold must agree on the
answer, its verdict and its tokens. Greedy decoding and per-sample seeds should make a row the same,
whichever process ran it. If any pair differs, nothing is appended and the exit status is 1: the split
is not to be trusted. A line the helper is still writing (no newline at the end yet) is left for the next
merge. The main folder's files are copied to ``<name>.before-merge-<UTC time>`` before anything is appended.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

Row = dict[str, Any]
Key = tuple[str, Any]

COMPARED = ("completion", "passed", "tokens")
"""What two runs of one (problem, strategy) or vote sample must share for the split to be trusted."""


@dataclass(frozen=True)
class RowsFile:
    name: str
    key: Callable[[Row], Key]


FILES = (
    RowsFile("results.jsonl", lambda row: (str(row["task_id"]), row["strategy"])),
    RowsFile("vote-samples.jsonl", lambda row: (str(row["task_id"]), row["index"])),
    RowsFile("reflexion-attempts.jsonl", lambda row: (str(row["task_id"]), row["reflexion"]["max_attempts"])),
)


@dataclass
class FileMerge:
    name: str
    new: list[Row]
    shared: int
    differing: list[Key]


def finished_rows(path: Path) -> list[Row]:
    """The complete lines of a JSONL file (a last line without its newline is still being written)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")[:-1]  # the part after the last newline is unfinished (or empty)
    return [json.loads(line) for line in lines if line.strip()]


def plan(helper: Iterable[Row], main: Iterable[Row], spec: RowsFile, strategy: str | None) -> FileMerge:
    """What merging ``helper`` into ``main`` adds, and which rows both hold but differ on."""
    have = {spec.key(row): row for row in main}
    merge = FileMerge(spec.name, [], 0, [])
    seen: set[Key] = set()
    for row in helper:
        if strategy is not None and spec.name == "results.jsonl" and row["strategy"] != strategy:
            continue
        key = spec.key(row)
        if key in seen:
            continue
        seen.add(key)
        if key not in have:
            merge.new.append(row)
            continue
        merge.shared += 1
        if any(row.get(field) != have[key].get(field) for field in COMPARED):
            merge.differing.append(key)
    return merge


def merge_folders(helper: Path, main: Path, strategy: str | None = None) -> tuple[list[FileMerge], bool]:
    """Append the helper's new rows to ``main``'s files; return the per-file plans and whether anything was written."""
    plans = [plan(finished_rows(helper / spec.name), finished_rows(main / spec.name), spec, strategy) for spec in FILES]
    if any(p.differing for p in plans) or not any(p.new for p in plans):
        return plans, False
    for p in plans:
        target = main / p.name
        if target.exists() and target.stat().st_size and not target.read_bytes().endswith(b"\n"):
            raise SystemExit(f"{target} ends in an unfinished line: is the main run still writing it? Stop it first.")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for p in plans:
        target = main / p.name
        if not p.new:
            continue
        if target.exists():
            shutil.copy2(target, main / f"{p.name}.before-merge-{stamp}")
        with target.open("a", encoding="utf-8") as out:
            out.writelines(json.dumps(row) + "\n" for row in p.new)
    return plans, True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("helper", type=Path, help="the helper's results folder")
    parser.add_argument("main", type=Path, help="the main run's results folder (its run stopped)")
    parser.add_argument("--strategy", help="merge only this strategy's results rows")
    args = parser.parse_args(argv)
    plans, written = merge_folders(args.helper, args.main, args.strategy)
    for p in plans:
        print(f"{p.name}: {len(p.new)} new, {p.shared} held by both, {len(p.differing)} of those differ")
    differing = [key for p in plans for key in p.differing]
    if differing:
        print(f"nothing merged: the two streams differ on {differing[:5]}; do not trust the split", file=sys.stderr)
        return 1
    print("merged" if written else "nothing new to merge")
    return 0


if __name__ == "__main__":
    sys.exit(main())
