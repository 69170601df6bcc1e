"""Solve mode end to end in Docker: a debate over a local instance, checked in its sandbox, graded resolved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.bench_swebench.solve_fixtures import config_for, scripted

from debatecode.bench.swebench.dataset import load_instances, select_instances
from debatecode.bench.swebench.harness import SWEBenchHarness
from debatecode.bench.swebench.solve import generate_predictions

LOCAL = Path(__file__).resolve().parents[2] / "benchmarks" / "swebench-local"

# The gold fix of debatecode-local__strutils-1, written as a SEARCH/REPLACE edit.
GOLD_EQUIVALENT = """The suffix must count towards the width.

strutils/text.py
<<<<<<< SEARCH
    return text[:width] + suffix
=======
    if width <= len(suffix):
        return suffix[:width]
    return text[: width - len(suffix)] + suffix
>>>>>>> REPLACE
"""

# Fits the width by dropping the suffix: breaks the existing test_truncate_cuts_long_text.
BREAKS_EXISTING_TEST = """Just cut the text.

strutils/text.py
<<<<<<< SEARCH
    return text[:width] + suffix
=======
    return text[:width]
>>>>>>> REPLACE
"""


@pytest.mark.docker
@pytest.mark.slow
async def test_debate_patch_is_checked_in_the_sandbox_and_graded_resolved(
    requires_docker: None, tmp_path: Path
) -> None:
    [instance] = select_instances(load_instances(LOCAL / "instances.jsonl"), ["debatecode-local__strutils-1"])
    out = tmp_path / "out"
    harness = SWEBenchHarness([instance], repos_dir=LOCAL / "repos", out=out)
    edits = {"agent-1": BREAKS_EXISTING_TEST, "agent-2": GOLD_EQUIVALENT}
    try:
        with scripted("solve-docker", lambda messages, tags: edits[tags["agent"]]) as model:
            predictions = await generate_predictions(
                harness, [instance], config=config_for(model, tmp_path, agents=2), strategy="debate", out=out
            )
        record = json.loads((out / "solve" / f"{instance.instance_id}.json").read_text())
        baseline = record["baseline"]["tests"]
        assert baseline["tests.test_text::test_truncate_cuts_long_text"] == "PASSED"
        # Only the repository's existing tests ran: the hidden FAIL_TO_PASS tests are not there.
        assert not any("fits_width" in name or "narrower" in name for name in baseline)
        broken, fixed = record["candidates"]
        assert broken["regressions"] == ["tests.test_text::test_truncate_cuts_long_text"]
        assert fixed["regressions"] == [] and fixed["check"]["status"] == "passed"
        assert record["chosen"] == 1 and record["calls"] == 2
        summary = await harness.grade(predictions)
    finally:
        await harness.aclose()
    assert summary.total == 1 and summary.resolved == 1
    graded = json.loads((harness.prediction_dir(predictions[0]) / "report.json").read_text())
    assert graded["status"] == "resolved", graded
