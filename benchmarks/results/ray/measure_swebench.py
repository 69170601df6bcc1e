"""Time SWE-bench items on the local instance set: grading a patch, and a scripted single-author solve.

Run from the repository root, with Docker and the images of ``benchmarks/swebench-local`` built
(``debatecode bench swebench --dataset benchmarks/swebench-local/instances.jsonl --predictions gold``
builds them): ``.venv/bin/python benchmarks/results/ray/measure_swebench.py``. It writes
``swebench.json`` beside itself.

The scripted model answers with each instance's reference patch, so the solve times are
debatecode's own work per instance (retrieval, worktree, edit, grading), without the model's:
the capacity plan in docs/scale-out.md adds model time from measured or assumed per-call costs.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
os.environ.setdefault("DEBATECODE_ALLOW_MODEL_REQUESTS", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from typer.testing import CliRunner  # noqa: E402

from debatecode.cli.app import app  # noqa: E402
from debatecode.llm import ScriptedModel, register_scripted, unregister_scripted  # noqa: E402

DATASET = REPO / "benchmarks" / "swebench-local" / "instances.jsonl"


def _bench(*args: str) -> float:
    started = time.monotonic()
    result = CliRunner().invoke(app, ["bench", "swebench", "--dataset", str(DATASET), "--jobs", "1", *args])
    if result.exit_code != 0:
        sys.exit(f"bench swebench {' '.join(args)} exited {result.exit_code}:\n{result.output}")
    return time.monotonic() - started


def main() -> None:
    instances = [json.loads(line) for line in DATASET.read_text().splitlines() if line.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="swe-measure-") as tmp:
        for instance in instances:
            iid = instance["instance_id"]
            grade = _bench("--predictions", "gold", "--instances", iid, "--out", f"{tmp}/gold-{iid}")
            register_scripted("measure-gold", ScriptedModel(fn=lambda m, t, p=instance["patch"]: f"```diff\n{p}```\n"))
            try:
                solve = _bench(
                    "--model", "scripted/measure-gold", "--strategy", "single", "--instances", iid,
                    "--out", f"{tmp}/solve-{iid}",
                )  # fmt: skip
            finally:
                unregister_scripted("measure-gold")
            rows.append(
                {"instance_id": iid, "grade_gold_s": round(grade, 2), "solve_single_scripted_s": round(solve, 2)}
            )
            print(json.dumps(rows[-1]), flush=True)
    (Path(__file__).parent / "swebench.json").write_text(
        json.dumps({"load_after": [round(x, 2) for x in os.getloadavg()], "rows": rows}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
