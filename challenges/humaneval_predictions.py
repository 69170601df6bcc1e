"""A researcher scores samples files with the HumanEval bridge: canonical solutions 164/164, empty ones 0/164."""

from __future__ import annotations

import json
import re

from challenges._harness import Journey, expect

NEEDS_DOCKER = True


def _score(journey: Journey, samples: str) -> tuple[int, int]:
    proc = journey.cli("bench", "humaneval", "--predictions", samples, "--sandbox", "docker", "--out", "scored")
    expect(proc.returncode == 0, f"scoring {samples} exited {proc.returncode}", proc.stdout + proc.stderr)
    found = re.search(r"(\d+)\s*/\s*(\d+)", proc.stdout)
    expect(found is not None, "no passed/total in the output", proc.stdout)
    assert found is not None
    return int(found.group(1)), int(found.group(2))


def run(journey: Journey) -> str:
    exported = journey.cli("bench", "humaneval", "--export-canonical", "canonical.jsonl")
    expect(exported.returncode == 0, "export failed", exported.stdout + exported.stderr)
    canonical = _score(journey, "canonical.jsonl")
    expect(canonical == (164, 164), f"canonical solutions scored {canonical[0]}/{canonical[1]}")
    rows = [json.loads(line) for line in (journey.workdir / "canonical.jsonl").read_text().splitlines()]
    (journey.workdir / "empty.jsonl").write_text(
        "".join(json.dumps({"task_id": r["task_id"], "completion": ""}) + "\n" for r in rows)
    )
    empty = _score(journey, "empty.jsonl")
    expect(empty == (0, 164), f"empty completions scored {empty[0]}/{empty[1]}")
    return "canonical 164/164, empty 0/164"
