"""A researcher sweeps a Reflexion setting: `debatecode sweep --set reflexion.max_attempts=1,2` on a tiny task.

The scripted model needs two reflections to fix its off-by-one draft
(challenges/replies/sum_range_two_attempts.yaml), so one attempt fails and
two pass: the sweep's table has one row per value and shows the difference,
each run is a stored session, and each attempt left an episode in memory.
"""

from __future__ import annotations

import json
from collections import defaultdict

from challenges._harness import REPO, Journey, expect, write_config

NEEDS_DOCKER = True
KEY = "reflexion.max_attempts"
VALUES = (1, 2)
PASS_RATES = {1: "0.00", 2: "1.00"}
"""What each value should score: the scripted model needs two reflections."""


def _table_rows(table: str) -> dict[int, dict[str, str]]:
    """The rows of sweep.md's table by their ``reflexion.max_attempts`` value, each as ``{column: cell}``."""
    lines = [line for line in table.splitlines() if line.startswith("|")]
    expect(len(lines) >= 2 and lines[0].split("|")[1].strip() == KEY, f"sweep.md's table is not by {KEY}", table)
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    expect(all(len(row) == len(header) for row in rows), "sweep.md's table has ragged rows", table)
    return {int(row[0]): dict(zip(header, row, strict=True)) for row in rows}


def run(journey: Journey) -> str:
    write_config(journey)
    task = REPO / "examples" / "tasks" / "sum_range.md"
    replies = REPO / "challenges" / "replies" / "sum_range_two_attempts.yaml"
    swept = journey.cli(
        "sweep",
        str(task),
        "--set",
        f"{KEY}={','.join(map(str, VALUES))}",
        "--set",
        "strategy=reflexion",
        "--set",
        "agents=1",
        "--model",
        f"scripted:{replies}",
        "--sandbox",
        "docker",
        "--out",
        "sweep",
    )
    expect(swept.returncode == 0, f"sweep exited {swept.returncode}", swept.stdout + swept.stderr)
    out = journey.workdir / "sweep"
    table = (out / "sweep.md").read_text()
    expect("Command: `debatecode sweep" in table, "sweep.md does not record its command", table)
    rows = _table_rows(table)
    expect(sorted(rows) == list(VALUES), f"sweep.md has rows for {sorted(rows)}, wanted one for each of {VALUES}")
    rates = {value: rows[value]["pass rate"] for value in VALUES}
    expect(rates == PASS_RATES, f"pass rates {rates}, wanted {PASS_RATES}", table)
    expect((out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "sweep.png is not a PNG")

    runs = [json.loads(line) for line in (out / "sweep.jsonl").read_text().splitlines()]
    by_value = {r["values"][KEY]: r for r in runs}
    expect(sorted(by_value) == list(VALUES) and len(runs) == len(VALUES), f"sweep.jsonl has {len(runs)} runs")
    listed = journey.cli("sessions", "list", "--json")
    stored = {s["id"]: s["status"] for s in json.loads(listed.stdout)}
    for value, result in by_value.items():
        expect(stored.get(result["session_id"]) == "completed", f"the run for {value} is not a stored session")

    episodes = journey.cli("memory", "list", "--json")
    attempts: dict[str, list[int]] = defaultdict(list)
    for episode in json.loads(episodes.stdout):
        attempts[episode["session_id"]].append(episode["attempt"])
    for value, result in by_value.items():
        seen = sorted(attempts[result["session_id"]])
        expect(seen == list(range(1, value + 1)), f"max_attempts={value} left episodes of attempts {seen}")
    calls = {value: by_value[value]["calls"] for value in VALUES}
    stored_episodes = sum(len(attempts[r["session_id"]]) for r in runs)
    return "; ".join(
        [f"{KEY}={v}: pass rate {rates[v]} in {calls[v]} calls" for v in VALUES]
        + [f"{len(runs)} sessions and {stored_episodes} episodes stored"]
    )
