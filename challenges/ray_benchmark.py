"""A researcher runs a HumanEval comparison through Ray, then locally, and gets the same results.

`debatecode bench humaneval --executor ray` starts a Ray instance on this
machine: each session is a Ray task whose worker (another process) builds its
own model client, local sandbox and store from the session's config. The model
is a script file (challenges/replies/humaneval_first_two.yaml), which a worker
loads by itself from its path: right on HumanEval/0, wrong on HumanEval/1. The
same command with `--executor local` then runs in this process, into another
folder, and must write the same results apart from timings and session ids;
every session of both runs is in the store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from challenges._harness import REPO, Journey, expect, write_config

NEEDS_DOCKER = False
REPLIES = REPO / "challenges" / "replies" / "humaneval_first_two.yaml"
STRATEGIES = ("single", "vote")
SAMPLES = 2
EXPECTED = {"HumanEval/0": True, "HumanEval/1": False}
"""Whether each problem's answer passes its hidden tests, with either strategy."""
TIMINGS = ("seconds", "session_id")
"""The only fields two runs of the same scripted benchmark may differ in."""
QUICK = "[quality]\nenabled = false\n\n[hooks]\nenabled = false\n"
"""Neither code quality nor the hooks are this journey's subject: skip their tool runs."""


def _lines(path: Path) -> list[dict[str, Any]]:
    expect(path.is_file(), f"{path.name} was not written")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _content(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows without their timings, ordered by problem, then strategy (or sample index)."""
    kept = [{k: v for k, v in row.items() if k not in TIMINGS} for row in rows]
    return sorted(kept, key=lambda r: (r["task_id"], str(r.get("strategy", r.get("index")))))


def _bench(journey: Journey, executor: str, out: str) -> Path:
    proc = journey.cli(
        "bench",
        "humaneval",
        "--executor",
        executor,
        "--model",
        f"scripted:{REPLIES}",
        "--limit",
        "2",
        "--strategy",
        ",".join(STRATEGIES),
        "--samples",
        str(SAMPLES),
        "--jobs",
        "2",
        "--sandbox",
        "local",
        "--out",
        out,
    )
    expect(proc.returncode == 0, f"bench humaneval --executor {executor} exited {proc.returncode}", proc.stderr)
    expect(
        f"({executor} executor)" in " ".join(proc.stderr.split()),
        f"the run does not say it used the {executor} executor",
        proc.stderr,
    )
    return journey.workdir / out


def run(journey: Journey) -> str:
    write_config(journey, QUICK)
    on_ray = _bench(journey, "ray", "on-ray")
    local = _bench(journey, "local", "local")

    ray_rows, local_rows = _lines(on_ray / "results.jsonl"), _lines(local / "results.jsonl")
    expect(len(ray_rows) == len(EXPECTED) * len(STRATEGIES), f"the Ray run wrote {len(ray_rows)} results")
    expect(_content(ray_rows) == _content(local_rows), "results.jsonl differs between Ray and local runs")
    passed = {(r["task_id"], r["strategy"]): r["passed"] for r in ray_rows}
    wanted = {(task, s): ok for task, ok in EXPECTED.items() for s in STRATEGIES}
    expect(passed == wanted, f"hidden-test verdicts {passed}, wanted {wanted}")
    votes = [r["samples"] for r in ray_rows if r["strategy"] == "vote"]
    expect(all(v["n"] == SAMPLES for v in votes), f"the votes drew {votes} samples, wanted {SAMPLES} each")
    ray_samples, local_samples = _lines(on_ray / "vote-samples.jsonl"), _lines(local / "vote-samples.jsonl")
    expect(_content(ray_samples) == _content(local_samples), "vote-samples.jsonl differs between the runs")
    for strategy in STRATEGIES:
        name = f"samples-{strategy}.jsonl"
        expect((on_ray / name).read_text() == (local / name).read_text(), f"{name} differs between the runs")

    listed = journey.cli("sessions", "list", "--json", "--limit", "100")
    expect(listed.returncode == 0, f"sessions list exited {listed.returncode}", listed.stderr)
    stored = {s["id"]: s["status"] for s in json.loads(listed.stdout)}
    runs = {"Ray": ray_rows + ray_samples, "local": local_rows + local_samples}
    for name, rows in runs.items():
        ids = {r["session_id"] for r in rows}
        missing = sorted(i for i in ids if stored.get(i) != "completed")
        expect(not missing, f"sessions of the {name} run not stored as completed: {missing}")
    ray_ids, local_ids = ({r["session_id"] for r in rows} for rows in runs.values())
    expect(not ray_ids & local_ids, "the local run reused sessions of the Ray run instead of running its own")
    sessions = {"Ray": len(ray_ids), "local": len(local_ids)}
    return (
        f"{len(ray_rows)} results identical through Ray and locally (HumanEval/0 passes, /1 fails); "
        f"{sessions['Ray']} + {sessions['local']} sessions stored"
    )
