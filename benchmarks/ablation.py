"""What each debate phase is worth: the HumanEval debate with one phase switched off at a time.

Each variant is the recorded runs' base config (``benchmarks/configs/humaneval-qwen.toml``)
with one change, run with ``bench humaneval --strategy debate`` on the same problems into
its own folder, so every variant resumes where it stopped. The table gives pass@1 on the
hidden tests and the mean tokens spent per problem, against the full debate.

Run from a fixed commit, in the background (it takes hours on 2 cores):

    .venv/bin/python benchmarks/ablation.py --limit 40 --out benchmarks/results/humaneval-qwen-ablation

Issue 32's ablation of the v3 debate (adjudication, fresh drafts, batched drafts; base
``benchmarks/configs/humaneval-qwen-v3.toml``), on held-out problems, after the v3 run:

    .venv/bin/python benchmarks/ablation.py --set v3 --start 40 --limit 40 \
        --full-from benchmarks/results/humaneval-qwen-v3/results.jsonl \
        --out benchmarks/results/humaneval-qwen-v3-ablation

``--table-only`` prints and writes the table from what is already there. ``--full-from
benchmarks/results/humaneval-qwen/results.jsonl`` takes the full debate from the recorded
164-problem run (same commit and config) instead of running it again. This is a report,
not a tuning loop: never choose settings by these hidden-test numbers.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from debatecode.bench._stats import paired_test

BASE = Path(__file__).parent / "configs" / "humaneval-qwen.toml"

VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "full": ("the recorded debate", {}),
    "no-self-evolvement": ("no drafts refined from their failures", {"phases": {"self_evolvement": False}}),
    "no-critique": ("no exchanged tests or contrastive revisions", {"phases": {"critique": False}}),
    "no-early-stop": ("the debate runs even when the drafts pass and agree", {"convergence": {"early_stop": False}}),
    "no-refine-iterations": ("drafts tested but never refined", {"self_evolvement": {"max_iterations": 0}}),
}

V3_BASE = Path(__file__).parent / "configs" / "humaneval-qwen-v3.toml"

V3_VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "full": ("the v3 debate", {}),
    "no-adjudication": ("no adjudicated tests (nor Red's distinguishing inputs)", {"phases": {"adjudication": False}}),
    "no-redraws": ("no fresh drafts while every candidate fails an example", {"self_evolvement": {"redraws": 0}}),
    "draft-batch-1": ("drafts one after another instead of batched (same seeds)", {"llm": {"draft_batch": 1}}),
}
"""Issue 32's ablation of the v3 debate (``--set v3``): adjudication, the fresh drafts, and batched drafts
(the parser's part is offline: ``rerank_recorded.py``'s ``ranking, old parser`` row)."""


def _merge(base: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in change.items():
        merged[key] = _merge(merged.get(key, {}), value) if isinstance(value, dict) else value
    return merged


def _toml(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for section, values in data.items():
        lines.append(f"[{section}]")
        lines.extend(f"{key} = {json.dumps(value)}" for key, value in values.items())
        lines.append("")
    return "\n".join(lines)


def _debate_rows(path: Path, numbers: range) -> dict[str, dict[str, Any]]:
    """The debate rows of ``path`` (a results.jsonl) on HumanEval/``numbers``, by task id."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []
    return {
        str(r["task_id"]): r
        for r in rows
        if r["strategy"] == "debate" and int(str(r["task_id"]).split("/")[-1]) in numbers
    }


def _summary(path: Path, numbers: range) -> tuple[int, int, float, float]:
    """Debate rows of ``path`` (a results.jsonl) on HumanEval/``numbers``: problems, passed, mean tokens, mean seconds."""
    debate = _debate_rows(path, numbers)
    passed = sum(1 for r in debate.values() if r.get("passed"))
    tokens = sum(r.get("tokens", 0) for r in debate.values()) / len(debate) if debate else 0.0
    seconds = sum(r.get("seconds", 0.0) for r in debate.values()) / len(debate) if debate else 0.0
    return len(debate), passed, tokens, seconds


def _passes(path: Path, numbers: range) -> dict[str, bool]:
    """Each debate row's hidden verdict in ``path`` (a results.jsonl) on HumanEval/``numbers``."""
    return {task: bool(row.get("passed")) for task, row in _debate_rows(path, numbers).items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=40, help="the first N HumanEval problems")
    parser.add_argument("--start", type=int, default=0, help="the first problem's number (with --limit: a range)")
    parser.add_argument(
        "--set", choices=("v1", "v3"), default="v1", help="v1: the first recorded run's phases; v3: issue 32's"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/humaneval-qwen-ablation"))
    parser.add_argument("--model", default="local/qwen2.5-coder-0.5b")
    parser.add_argument("--only", default="", help="comma-separated variants (default: all)")
    parser.add_argument("--table-only", action="store_true", help="write the table from existing results")
    parser.add_argument(
        "--full-from",
        type=Path,
        help="take the full debate from this results.jsonl (the recorded run of the same commit and config) "
        "instead of running the `full` variant again",
    )
    args = parser.parse_args()
    variants = V3_VARIANTS if args.set == "v3" else VARIANTS
    base = tomllib.loads((V3_BASE if args.set == "v3" else BASE).read_text())
    numbers = range(args.start, args.start + args.limit)
    chosen = [v for v in (args.only.split(",") if args.only else variants) if v]
    if args.full_from is not None:  # the full debate is already recorded: never run it again
        chosen = [v for v in chosen if v != "full"]
    args.out.mkdir(parents=True, exist_ok=True)
    console = Console()
    if not args.table_only:
        for name in chosen:
            folder = args.out / name
            folder.mkdir(parents=True, exist_ok=True)
            config = folder / "config.toml"
            config.write_text(_toml(_merge(base, variants[name][1])))
            console.rule(f"{name}: {variants[name][0]}")
            command = [
                sys.executable, "-m", "debatecode.cli.app", "bench", "humaneval", "--strategy", "debate",
                "--model", args.model, "--problems", ",".join(str(n) for n in numbers), "--config", str(config),
                "--out", str(folder),
            ]  # fmt: skip
            if subprocess.run(command, check=False).returncode not in (0, 1):
                console.print(f"[red]{name} failed; rerun to resume[/]")
                return 3
    _report(args, chosen, console, variants, numbers)
    return 0


def _report(
    args: argparse.Namespace,
    chosen: list[str],
    console: Console,
    variants: dict[str, tuple[str, dict[str, Any]]],
    numbers: range,
) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    full_source = args.full_from or args.out / "full" / "results.jsonl"
    full = _summary(full_source, numbers)
    if args.full_from is not None and "full" not in chosen:
        chosen = ["full", *chosen]
    table = Table(title=f"Debate ablation, HumanEval/{numbers.start}-{numbers.stop - 1}, {args.model}")
    rows = [
        "| variant | what changes | problems | pass@1 | Δ vs full | mean tokens | × full | mean s | × full"
        " | full only / it only | McNemar p |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    full_passes = _passes(full_source, numbers)
    for column in ("variant", "what changes", "problems", "pass@1", "Δ vs full", "mean tokens", "× full"):
        table.add_column(column)
    table.add_column("mean s")
    table.add_column("× full ")
    table.add_column("full only / it only")
    table.add_column("McNemar p")
    for name in chosen:
        source = full_source if name == "full" else args.out / name / "results.jsonl"
        done, passed, tokens, seconds = _summary(source, numbers)
        rate = passed / done if done else 0.0
        full_rate = full[1] / full[0] if full[0] else 0.0
        cells = [
            name,
            variants[name][0] + (f" (rows of {args.full_from})" if name == "full" and args.full_from else ""),
            str(done),
            f"{passed}/{done} ({rate:.1%})" if done else "—",
            f"{(rate - full_rate) * 100:+.1f} pts" if done and full[0] else "—",
            f"{tokens:,.0f}" if done else "—",
            f"{tokens / full[2]:.2f}" if done and full[2] else "—",
            f"{seconds:,.0f}" if done else "—",
            f"{seconds / full[3]:.2f}" if done and full[3] else "—",
        ]
        paired = paired_test("full", full_passes, name, _passes(source, numbers))
        cells += (
            ["—", "—"] if name == "full" or not paired.problems else [f"{paired.b} / {paired.c}", f"{paired.p:.2g}"]
        )
        table.add_row(*cells)
        rows.append("| " + " | ".join(cells) + " |")
    console.print(table)
    (args.out / "README.md").write_text(
        "# Debate ablation (HumanEval, embedded Qwen)\n\n"
        f"Command: `{' '.join(sys.argv)}` at commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.\n\n"
        f"Each variant is `benchmarks/configs/{(V3_BASE if args.set == 'v3' else BASE).name}` with one change (its `config.toml` is in its\n"
        "folder). pass@1 is on the hidden tests; tokens are spent tokens per problem. A subset of HumanEval,\n"
        "not the whole: read differences of a few problems as noise. The last two columns pair each variant with\n"
        "the full debate on the problems both answered (exact McNemar).\n\n" + "\n".join(rows) + "\n"
    )


if __name__ == "__main__":
    raise SystemExit(main())
