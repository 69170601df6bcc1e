"""The product's single greedy answers against the standalone recipe's, problem by problem (issue 32).

The recipe (``../shared/baselines/humaneval-qwen0.5b-greedy-recipe.jsonl``, 99/164 in Docker) and the product's
``single`` strategy ask the embedded Qwen2.5-Coder-0.5B the same question with the same messages (the product's
``function-only`` prompt is the recipe's). This script finds where their answers differ and what that costs:

- the function each one defines (the entry point, parsed from the whole program) is compared as an AST, so
  formatting and comments do not count as a difference;
- the hidden verdicts of both (each scored by ``bench humaneval --predictions`` / the run) are cross-tabulated;
- the problems where the functions differ are listed in ``differences.jsonl`` with both verdicts.

Run after the v3 run's single rows exist:

    .venv/bin/python benchmarks/single_vs_recipe.py \\
        --single <run folder>/results.jsonl \\
        --recipe ../shared/baselines/humaneval-qwen0.5b-greedy-recipe.jsonl \\
        --recipe-results <recipe>_results.jsonl --out benchmarks/results/single-vs-recipe
"""

from __future__ import annotations

import argparse
import ast
import json
from collections import Counter
from pathlib import Path
from typing import Any

from debatecode.bench.humaneval import load_problems


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _function(program: str, name: str) -> str | None:
    """``ast.dump`` of the last definition of ``name`` in ``program`` (None when it does not parse)."""
    try:
        tree = ast.parse(program)
    except SyntaxError:
        return None
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not found:
        return None
    node = found[-1]
    if (
        node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(getattr(node.body[0], "value", None), ast.Constant)
    ):
        node.body = node.body[1:] or node.body  # the docstring is the prompt's, not the model's work
    return ast.dump(node)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--single", required=True, type=Path, help="results.jsonl holding the single rows")
    parser.add_argument("--recipe", required=True, type=Path)
    parser.add_argument("--recipe-results", required=True, type=Path, help="the recipe's _results.jsonl")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/single-vs-recipe"))
    args = parser.parse_args()

    problems = {p["task_id"]: p for p in load_problems()}
    single = {r["task_id"]: r for r in _rows(args.single) if r.get("strategy") == "single"}
    recipe = {r["task_id"]: r for r in _rows(args.recipe)}
    verdict = {r["task_id"]: bool(r["passed"]) for r in _rows(args.recipe_results)}
    tasks = sorted(set(single) & set(recipe), key=lambda t: int(t.split("/")[1]))
    cells: Counter[tuple[str, bool, bool]] = Counter()
    lines: list[dict[str, Any]] = []
    for task in tasks:
        problem = problems[task]
        name = problem["entry_point"]
        mine = _function(problem["prompt"] + single[task]["completion"], name)
        theirs = _function(problem["prompt"] + recipe[task]["completion"], name)
        same = mine is not None and mine == theirs
        kind = "same function" if same else "different function"
        cells[(kind, bool(single[task]["passed"]), verdict[task])] += 1
        if not same:
            lines.append(
                {
                    "task_id": task,
                    "product_passed": bool(single[task]["passed"]),
                    "recipe_passed": verdict[task],
                    "product_parses": mine is not None,
                    "recipe_parses": theirs is not None,
                }
            )
    product_total = sum(bool(single[t]["passed"]) for t in tasks)
    recipe_total = sum(verdict[t] for t in tasks)
    table = [
        f"Problems compared: {len(tasks)}. Product single: {product_total}/{len(tasks)}; recipe: {recipe_total}/{len(tasks)}.",
        "",
        "| answers | both pass | product only | recipe only | neither |",
        "|---|---|---|---|---|",
    ]
    for kind in ("same function", "different function"):
        row = [
            cells[(kind, True, True)],
            cells[(kind, True, False)],
            cells[(kind, False, True)],
            cells[(kind, False, False)],
        ]
        table.append(f"| {kind} ({sum(row)}) | " + " | ".join(str(x) for x in row) + " |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "differences.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (args.out / "table.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
