"""How many HumanEval problems get a visible test: the old doctest-only extraction against the example parser.

Reads only each problem's ``prompt`` (through the product's ``load_problems`` and
``problem_task``); the hidden ``test`` and the ``canonical_solution`` are never opened.
"Before" is what the bridge did up to issue 32: ``>>>`` doctests of the entry point's
docstring that have an output line. "After" is ``problem_task(problem).examples``.

    .venv/bin/python benchmarks/example_coverage.py --write benchmarks/results/example-coverage/README.md
"""

from __future__ import annotations

import argparse
import doctest
import subprocess
import sys
from collections import Counter
from pathlib import Path

from debatecode.bench.humaneval.problems import _docstring, load_problems, problem_task
from debatecode.examples import find_examples, parameter_names


def old_examples(problem: dict[str, str]) -> int:
    docstring = _docstring(problem["prompt"], problem["entry_point"])
    return sum(1 for ex in doctest.DocTestParser().get_examples(docstring) if ex.want.strip())


def report() -> str:
    problems = load_problems()
    before = [old_examples(p) for p in problems]
    after = [len(problem_task(p).examples) for p in problems]
    forms: Counter[str] = Counter()
    for problem in problems:
        docstring = _docstring(problem["prompt"], problem["entry_point"])
        params = parameter_names(problem["prompt"], problem["entry_point"])
        forms.update(e.form for e in find_examples(docstring, problem["entry_point"], params))
    rows = [("before: doctests with an output line", before), ("after: every form, by value", after)]
    lines = [
        f"| extraction | problems with >= 1 visible test (of {len(problems)}) | examples | HumanEval/0-39 | HumanEval/40-163 |",
        "|---|---|---|---|---|",
    ]
    for name, counts in rows:
        with_any = sum(1 for c in counts if c)
        design = sum(1 for c in counts[:40] if c)
        rest = sum(1 for c in counts[40:] if c)
        lines.append(f"| {name} | {with_any} | {sum(counts)} | {design}/40 | {rest}/124 |")
    lines += ["", "| form | examples |", "|---|---|"]
    lines += [f"| {form} | {count} |" for form, count in forms.most_common()]
    missing = [p["task_id"] for p, c in zip(problems, after, strict=True) if not c]
    lines += ["", f"Problems with no visible test: {', '.join(missing) or 'none'}."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", type=Path, help="also write a README with the command and the table")
    args = parser.parse_args()
    table = report()
    print(table)
    if args.write:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(README.format(commit=commit or "unknown", table=table), encoding="utf-8")
        print(f"\nwrote {args.write}", file=sys.stderr)


README = """# Visible tests on HumanEval: doctests only, against every example form

Issue 32, item 1. How many of the 164 HumanEval problems give the agents at least
one visible test, and how many examples in all, when the bridge reads only `>>>`
doctests with an output line (before) and when it reads every example form the
parser understands (after; `docs/task-format.md`, "Examples the parser understands").

```
.venv/bin/python benchmarks/example_coverage.py --write benchmarks/results/example-coverage/README.md
```

Run at commit {commit}. It reads only the problems' `prompt`, never `test` or
`canonical_solution`, and runs no code.

{table}

What stays uncovered, by reason: HumanEval/38, 41, 50 and 83 give no example at all;
HumanEval/81 and 149 show their examples under another function's name
(`grade_equation`, `list_sort`), which the parser does not take for the entry point;
HumanEval/80 writes its arguments unquoted (`is_happy(a) => False`), which reads as a
placeholder name; HumanEval/160 writes its example as assignments to names that are
not its parameters (`array = [2, 3, 4, 5]` for `operand`) and shows no call.

The rules were written from the forms the prompts use, as general rules (each has a
unit test on docstrings written for it, in `tests/examples/`), never from the hidden
tests. HumanEval's hidden tests often repeat the docstring's examples, so a filter on
these visible examples is unusually strong on HumanEval; say so wherever a result
depends on it.
"""


if __name__ == "__main__":
    main()
