"""Time a scripted HumanEval run serially, with ``--jobs 2``, and through a local Ray cluster (``--executor ray``).

Run from the repository root: ``.venv/bin/python benchmarks/results/ray/measure.py --rounds 2``.
It writes ``results.json`` beside itself and prints a markdown table.

The run is the one ``tests/bench/test_jobs.py`` compares (``tests.support.humaneval_scripted``:
HumanEval/0, /7 and /13, all four strategies, 2 vote samples, 2 debate authors, a
zero-latency scripted model and the tests' dummy sandbox), so every session is CPU
work on this machine: the numbers show the executors' overhead, not what an API
model's waiting would let them overlap. Each round runs the three settings in a
rotating order; a Ray round starts its own cluster (``ray.init(num_cpus=2)``) and
times that start separately from the run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DEBATECODE_ALLOW_MODEL_REQUESTS", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.support import humaneval_scripted  # noqa: E402
from tests.support.ray_worker import HOOK, prepare_worker  # noqa: E402

from debatecode.bench import run_humaneval  # noqa: E402
from debatecode.bench.humaneval.strategies import STRATEGIES  # noqa: E402

SETTINGS = ("serial", "jobs-2", "ray")


def _one(setting: str, folder: Path) -> dict[str, float]:
    import ray

    options: dict[str, Any] = {
        "config": humaneval_scripted.mixed_config(folder / "bench.db"),
        "strategies": STRATEGIES,
        "samples": 2,
        "agents": 2,
        "out": folder / setting,
    }
    timing: dict[str, float] = {}
    if setting == "ray":
        started = time.monotonic()
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"worker_process_setup_hook": HOOK, "env_vars": {"PYTHONPATH": str(REPO)}},
        )
        timing["ray_init"] = time.monotonic() - started
        options["executor"] = "ray"
    else:
        options["jobs"] = 1 if setting == "serial" else 2
    started = time.monotonic()
    try:
        run_humaneval(humaneval_scripted.problems(), **options)
    finally:
        timing["run"] = time.monotonic() - started
        if setting == "ray":
            ray.shutdown()
    return timing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    prepare_worker()  # this process too: the serial and --jobs 2 runs use the same model and sandbox
    rows: list[dict[str, Any]] = []
    for index in range(args.rounds):
        order = SETTINGS[index % 3 :] + SETTINGS[: index % 3]
        for setting in order:
            load = os.getloadavg()[0]
            with tempfile.TemporaryDirectory(prefix="ray-measure-") as tmp:
                timing = _one(setting, Path(tmp))
            rows.append({"round": index + 1, "setting": setting, "load_before": round(load, 2), **timing})
            print(json.dumps(rows[-1]), flush=True)
    summary = {
        setting: {
            "median_run_s": round(statistics.median(r["run"] for r in rows if r["setting"] == setting), 1),
            "runs": sum(1 for r in rows if r["setting"] == setting),
        }
        for setting in SETTINGS
    }
    inits = [r["ray_init"] for r in rows if "ray_init" in r]
    summary["ray"]["median_init_s"] = round(statistics.median(inits), 1)
    result = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "rows": rows,
        "summary": summary,
    }
    (Path(__file__).parent / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    print("| setting | runs | median run (s) |\n|---|---|---|")
    for setting in SETTINGS:
        print(f"| {setting} | {summary[setting]['runs']} | {summary[setting]['median_run_s']} |")
    print(f"ray.init (2 CPUs), median: {summary['ray']['median_init_s']} s")


if __name__ == "__main__":
    main()
