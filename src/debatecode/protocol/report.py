"""The session's outputs: ``solution.py`` and a readable ``report.md``.

Both are written to the output folder and committed as the last version on
the session's branch, so the report always describes the code beside it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from debatecode.errors import VersionControlError
from debatecode.protocol.state import SessionRecord, TestReport, TurnRecord

if TYPE_CHECKING:
    from debatecode.protocol.run import Candidate, DebateRun

__all__ = ["render_report", "write_outputs"]

logger = logging.getLogger(__name__)

_MARK = {"passed": "✅", "failed": "❌", "error": "💥", "timeout": "⏱"}


def write_outputs(run: DebateRun, session: SessionRecord, winner: Candidate | None) -> tuple[Path | None, Path]:
    """Write ``solution.py`` (when there is code) and ``report.md`` to the output folder.

    Returns their paths. A failure to commit them to git is logged, not raised:
    the files on disk are what the user needs first.
    """
    out = Path(session.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    solution_path: Path | None = None
    if winner is not None and winner.code is not None:
        solution_path = out / "solution.py"
        solution_path.write_text(winner.code, encoding="utf-8")
    elif (out / "solution.py").exists():
        (out / "solution.py").unlink()
    turns = sorted(run.journal.values(), key=lambda t: t.seq)
    text = render_report(run, session, winner, turns)
    report_path = out / "report.md"
    report_path.write_text(text, encoding="utf-8")
    try:
        if winner is not None and winner.code is not None:
            run.worktree.commit_version(
                "solution.py",
                winner.code,
                f"final: {winner.agent_id} ({winner.passed}/{winner.report.total} tests)",
                {"Debate-Session": session.id, "Status": session.status},
            )
        run.worktree.commit_version(
            "report.md", text, f"report: session {session.status}", {"Debate-Session": session.id}
        )
    except VersionControlError as exc:
        logger.warning("could not commit the final outputs of session %s: %s", session.id, exc)
    return solution_path, report_path


def _tests_line(report: TestReport) -> str:
    return f"{report.passed}/{report.total}"


def _fence(code: str, lang: str = "python") -> str:
    ticks = "````" if "```" in code else "```"
    return f"{ticks}{lang}\n{code.rstrip()}\n{ticks}"


def render_report(run: DebateRun, session: SessionRecord, winner: Candidate | None, turns: list[TurnRecord]) -> str:
    """The markdown report of a session."""
    lines: list[str] = [f"# debatecode report: {run.task.title}", ""]
    verdict = (
        "no code"
        if winner is None
        else ("all tests pass" if winner.report.all_passed else f"{_tests_line(winner.report)} tests pass")
    )
    lines += [
        "| | |",
        "|---|---|",
        f"| Session | `{session.id}` |",
        f"| Status | **{session.status}** ({verdict}) |",
        f"| Task | `{run.task.path}` |",
        f"| Model | `{session.model}` |",
        f"| Agents | {len(run.agents)} |",
        f"| Sandbox | {run.tests.sandbox.name} |",
        f"| Rounds | {session.total_rounds} |",
        f"| Tokens | {session.prompt_tokens} prompt + {session.completion_tokens} completion |",
        f"| Cost | ${session.cost_usd:.4f} |",
        f"| Time | {session.duration_s:.1f} s |",
        f"| Versions | branch `{session.branch}` in `{session.repo_path}` |",
        "",
    ]
    if session.error:
        lines += ["## What went wrong", "", f"> {session.error}", ""]
    lines += ["## Outcome", ""]
    outcome = session.outcome or {}
    if winner is None:
        lines += [f"No candidate was chosen: {outcome.get('reason', 'no agent produced code')}.", ""]
    else:
        lines += [
            f"**{winner.agent_id}** wins ({outcome.get('method', '?')}): {outcome.get('reason', '')}.",
            "",
            _fence(winner.code or ""),
            "",
            "### Test results of the final code",
            "",
            "| test | outcome | time |",
            "|---|---|---|",
        ]
        for case in winner.report.cases:
            lines.append(
                f"| `{case.name}` | {_MARK.get(case.outcome, '')} {case.outcome} | {case.duration_s * 1000:.0f} ms |"
            )
        failures = winner.report.failures()
        if failures:
            lines += ["", "Failures:", ""]
            for case in failures:
                lines += [f"- `{case.name}`:", "", _fence(case.message.strip()[-1500:] or "(no message)", "text"), ""]
        lines.append("")
    lines += ["## Candidates", "", "| agent | versions | final tests | adopted from |", "|---|---|---|---|"]
    for agent in run.agents:
        candidate = run.candidates.get(agent.id)
        history = run.history.get(agent.id, [])
        passed = _tests_line(candidate.report) if candidate else "-"
        source = f"{candidate.phase} round {candidate.round}" if candidate else "-"
        lines.append(f"| {agent.id} | {sum(1 for c in history if c.code)} | {passed} | {source} |")
    vote = outcome.get("vote")
    if vote:
        lines += [
            "",
            f"Vote ({vote['method']}): "
            + ", ".join(f"{k}: {v:g}" for k, v in vote["tallies"].items())
            + f"; abstentions: {vote['abstentions']}.",
        ]
    lines += [
        "",
        "## Turns",
        "",
        "| # | round | phase | agent | status | tokens | time | tests |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for turn in turns:
        tests = ""
        if turn.test_results:
            report = TestReport.model_validate(turn.test_results)
            tests = _tests_line(report)
        if turn.metadata.get("kind") == "vote":
            tests = f"vote: {turn.metadata.get('vote') or 'abstain'}"
        lines.append(
            f"| {turn.seq} | {turn.round} | {turn.phase} | {turn.agent_id} | {turn.status} | "
            f"{turn.prompt_tokens}+{turn.completion_tokens} | {turn.response_time_ms} ms | {tests} |"
        )
    lines += ["", "## Transcript", ""]
    for turn in turns:
        lines += [
            f"<details><summary>#{turn.seq} {turn.phase} · {turn.agent_id} · round {turn.round} · {turn.status}</summary>",
            "",
            "Reply:",
            "",
            _fence(turn.content.strip() or "(empty reply)", "text"),
            "",
            "</details>",
            "",
        ]
    lines += [
        "## Inspect further",
        "",
        f"- `debatecode sessions show {session.id}`",
        f"- `git -C {session.repo_path} log --stat {session.branch}`",
        "",
    ]
    return "\n".join(lines)
