"""Off a terminal, command output is never cut or wrapped at 80 columns (cli/console.py make_console).

The list and show commands print tables at their natural width; every other command (the
``bench swebench`` table, ``export inspect --bench`` paths, the ``bench humaneval`` summary)
prints through the same consoles, so a pipe or a file gets each line whole.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from debatecode.bench.swebench.report import ModelTally, RunSummary, SummaryRow
from debatecode.cli.bench_swebench import print_summary
from debatecode.cli.console import UncutConsole, make_console

LONG_PATH = "/work/" + "/".join(f"a-rather-long-folder-name-{i}" for i in range(8)) + "/strategy-debate.eval"

_PRINTS = f"""
from rich.table import Table
from debatecode.cli.common import console, err_console
console.print("eval log: {LONG_PATH}", markup=False)
table = Table("instance", "status")
table.add_column("s", justify="right", no_wrap=True)
table.add_row("{"django__django-" + "1" * 120}", "resolved", "12.5")
console.print(table)
console.print("| strategy | pass@1 | 95% CI | mean tokens | calls | time | a column far to the right of eighty |")
err_console.print("hint: {LONG_PATH}")
"""


def test_a_pipe_gets_every_line_whole() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run(
        [sys.executable, "-c", _PRINTS], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    out = proc.stdout.splitlines()
    assert f"eval log: {LONG_PATH}" in out
    row = next(line for line in out if "django__django-" in line)
    assert "django__django-" + "1" * 120 in row and "resolved" in row and "12.5" in row, row
    assert "…" not in proc.stdout, "no cell is shortened"
    assert any(line.endswith("a column far to the right of eighty |") for line in out)
    assert f"hint: {LONG_PATH}" in proc.stderr.splitlines()


def test_the_swebench_summary_keeps_long_instance_ids_and_paths(tmp_path: Path) -> None:
    out_dir = tmp_path / ("results-" + "x" * 90)
    instance = "astropy__astropy-" + "7" * 80
    summary = RunSummary(
        source="predictions-of-a-model-with-a-long-name.jsonl",
        total=1,
        resolved=1,
        by_model={"m": ModelTally(total=1, resolved=1)},
        rows=[
            SummaryRow(
                instance_id=instance,
                model="m",
                status="resolved",
                resolved=True,
                patch="git apply",
                tests_passed="12/12",
                protected_restored=0,
                duration_s=3.25,
            )
        ],
    )
    stream = io.StringIO()
    print_summary(summary, out_dir, make_console(file=stream))
    text = stream.getvalue()
    assert instance in text and "…" not in text
    assert f"summary: {out_dir / 'summary.md'}" in text.splitlines()
    assert f"reports: {out_dir}/<model>/<instance>/report.json" in text.splitlines()


def test_short_output_and_terminals_are_printed_as_rich_prints_them() -> None:
    stream = io.StringIO()
    console = make_console(file=stream)
    assert isinstance(console, UncutConsole) and not console.is_terminal
    console.print("short")
    table = Table("a", "b")
    table.add_row("1", "2")
    console.print(table)
    plain = io.StringIO()
    Console(file=plain, highlight=False).print("short")
    Console(file=plain, highlight=False).print(table)
    assert stream.getvalue() == plain.getvalue()

    terminal = io.StringIO()
    wrapped = UncutConsole(file=terminal, force_terminal=True, width=40, color_system=None)
    wrapped.print("word " * 20)
    assert max(len(line) for line in terminal.getvalue().splitlines()) <= 40, "a terminal still wraps to its width"
