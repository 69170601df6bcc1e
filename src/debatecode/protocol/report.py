"""The session's outputs: ``solution.py`` and the synthesis ``report.md``.

The report gives the final code, the chosen approach with its reasoning, the
rejected alternatives, the dissents (attributed to roles), a risk register and
a confidence level, then the full record: candidates, turns and transcript.
Both files are written to the output folder and committed as the last versions
on the session's branch, so the report always describes the code beside it.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from debatecode.errors import DiskWriteError, VersionControlError, disk_write_failure
from debatecode.execution.results import TestReport
from debatecode.protocol.state import ReviewItem, Risk
from debatecode.store.records import SessionRecord, TurnRecord

if TYPE_CHECKING:
    from debatecode.protocol.run import DebateRun
    from debatecode.protocol.state import Candidate

__all__ = ["confidence_level", "escalation_summary", "render_report", "write_outputs"]

logger = logging.getLogger(__name__)

_MARK = {"passed": "✅", "failed": "❌", "error": "💥", "timeout": "⏱"}


def write_outputs(run: DebateRun, session: SessionRecord, winner: Candidate | None) -> tuple[Path | None, Path]:
    """Write ``solution.py`` (when there is code) and ``report.md`` to the output folder.

    A failure to commit them to git is logged, not raised: the files on disk
    are what the user needs first.

    Raises:
        DiskWriteError: the disk refused the write (full, over quota, read-only); the
            message names the file and the ``--resume`` command that finishes the session.
        OSError: the output folder cannot be written for another reason.
    """
    out = Path(session.out_dir)
    text = render_report(run, session, winner, run.turns())
    solution_path: Path | None = None
    report_path = out / "report.md"
    writing = out
    try:
        out.mkdir(parents=True, exist_ok=True)
        if winner is not None and winner.code is not None:
            solution_path = writing = out / "solution.py"
            solution_path.write_text(winner.code, encoding="utf-8")
        elif (out / "solution.py").exists():
            (out / "solution.py").unlink()
        writing = report_path
        report_path.write_text(text, encoding="utf-8")
    except OSError as exc:
        full = disk_write_failure(exc)
        if full is None:
            raise
        raise DiskWriteError(
            OSError(full.errno, full.strerror, full.filename or str(writing)),
            kept=f"Nothing stored is lost: session {session.id} and its turns are in the store.",
            then=f"finish the session: `debatecode solve {session.task_path} --resume {session.id}`",
        ) from exc
    try:
        if winner is not None and winner.code is not None:
            run.workspace.worktree.commit_version(
                "solution.py",
                winner.code,
                f"final: {winner.agent_id} ({winner.passed}/{winner.report.total} tests)",
                {"Debate-Session": session.id, "Status": session.status},
            )
        run.workspace.worktree.commit_version(
            "report.md", text, f"report: session {session.status}", {"Debate-Session": session.id}
        )
    except VersionControlError as exc:
        logger.warning("could not commit the final outputs of session %s: %s", session.id, exc)
    return solution_path, report_path


def confidence_level(run: DebateRun, winner: Candidate | None) -> tuple[str, str]:
    """HIGH, MEDIUM or LOW, and why.

    HIGH: every test the winner ran passes (visible, exchanged, Red's), the
    reviewers' last scores meet the target and any vote reached its threshold.
    MEDIUM: every visible test passes. LOW: otherwise.
    """
    if winner is None or winner.code is None:
        return "LOW", "no code was produced"
    if not winner.all_visible_pass():
        return (
            "LOW",
            f"the final code fails {winner.report.total_in('visible') - winner.visible_passed} visible test(s)",
        )
    last_round = max((r.round for r in run.state.reviews), default=None)
    scores = [r.satisfaction for r in run.state.reviews if r.round == last_round]
    satisfied = not scores or min(scores) >= run.config.review.satisfaction_target
    vote = run.state.outcome.vote.model_dump() if run.state.outcome.vote else {}
    vote_ok = not vote or vote.get("threshold_reached", True)
    if winner.report.all_passed and satisfied and vote_ok:
        return "HIGH", "every visible, exchanged and adversarial test passes" + (
            ", reviewers are satisfied" if scores else ""
        ) + (", the vote reached its threshold" if vote else "")
    reasons = []
    if not winner.report.all_passed:
        reasons.append(f"{len(winner.report.failures())} generated test(s) fail")
    if not satisfied:
        reasons.append(f"a reviewer scored {min(scores)} < {run.config.review.satisfaction_target}")
    if not vote_ok:
        reasons.append(f"the vote share {vote.get('share')} is below the threshold")
    return "MEDIUM", "every visible test passes, but " + "; ".join(reasons)


def escalation_summary(run: DebateRun) -> str:
    """The positions, plainly, for a human to decide when the debate could not converge."""
    lines = [f"The debate stopped without consensus ({run.state.stop_reason}). Positions:"]
    latest: dict[str, ReviewItem] = {}
    for review in run.state.reviews:
        latest[review.reviewer] = review
    for candidate in run.ranking():
        lines.append(
            f"- {candidate.agent_id}: passes {candidate.passed}/{candidate.report.total} tests"
            + (f" ({candidate.label})" if candidate.label else "")
        )
    for reviewer, review in latest.items():
        concerns = "; ".join(review.concerns[:3]) or review.summary[:200]
        lines.append(f"- {reviewer} ({review.role}) satisfaction {review.satisfaction}: {concerns}")
    for dissent in run.state.dissents[-3:]:
        lines.append(f"- dissent from {dissent.role}: {dissent.text[:200]}")
    lines.append(
        "Your decision: pick a candidate, guide another round (`--resume` with more rounds), or accept the leader."
    )
    return "\n".join(lines)


# Model text in the report is untrusted markdown: a reply must not become headings, rules, links or HTML.
# Blocks of it go in fences no line of it can close; short texts are flattened to one line and escaped.
_BACKTICK_RUN = re.compile(r"`+")
_INLINE_MARKUP = re.compile(r"([\\`*_\[\]<>|~&#])")


def _fence(code: str, lang: str = "python") -> str:
    """``code`` as a fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(code)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{code.rstrip()}\n{ticks}"


def _inline(text: object) -> str:
    """Model text for a sentence, list item or table cell: one line, every markdown or HTML sign escaped."""
    return _INLINE_MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def _code_cell(name: str) -> str:
    """A test name as inline code in a table cell, whatever backticks or pipes it holds."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(name)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if name.startswith("`") or name.endswith("`") else ""
    cell = " ".join(name.split()).replace("|", "\\|")  # GFM reads an escaped pipe as text, even in code
    return f"{ticks}{pad}{cell}{pad}{ticks}"


def _tests_line(report: TestReport) -> str:
    return f"{report.passed}/{report.total}"


def render_report(run: DebateRun, session: SessionRecord, winner: Candidate | None, turns: list[TurnRecord]) -> str:
    """The markdown report of a session."""
    task = run.task
    verdict = (
        "no code"
        if winner is None
        else ("all tests pass" if winner.report.all_passed else f"{_tests_line(winner.report)} tests pass")
    )
    level, why = confidence_level(run, winner)
    lines: list[str] = [f"# debatecode report: {task.title}", ""]
    lines += [
        "| | |",
        "|---|---|",
        f"| Session | `{session.id}` |",
        f"| Status | **{session.status}** ({verdict}) |",
        f"| Confidence | **{level}** |",
        f"| Task | `{task.path}` |",
        f"| Model | `{session.model}` |",
        f"| Agents | {', '.join(a.id for a in run.agents)} |",
        f"| Phases | {', '.join(name for name, on in run.config.phases.model_dump().items() if on)} |",
        f"| Topology / planning | {run.config.topology.type} / {run.state.planning_style.upper()} |",
        f"| Sandbox | {run.workspace.tests.sandbox.name} |",
        f"| Rounds | {session.total_rounds} ({run.state.stop_reason or 'no debate loop'}) |",
        f"| Tokens | {session.prompt_tokens} prompt + {session.completion_tokens} completion |",
        f"| Cost | ${session.cost_usd:.4f} |",
        f"| Time | {session.duration_s:.1f} s |",
        f"| Versions | branch `{session.branch}` in `{session.repo_path}` |",
        "",
    ]
    if session.error:
        lines += ["## What went wrong", "", _fence(session.error, "text"), ""]
    lines += _final_code(winner)
    lines += _approach(run, session, winner)
    lines += _alternatives(run, winner)
    lines += _dissents(run)
    lines += _risks(run, winner)
    lines += ["## Confidence", "", f"**{level}**: {why}.", ""]
    if run.state.escalation:
        lines += ["## Escalation", "", _fence(run.state.escalation, "text"), ""]
    lines += _record(run, turns)
    lines += [
        "## Inspect further",
        "",
        f"- `debatecode sessions show {session.id}`",
        f"- `debatecode sessions audit {session.id}`",
        f"- `git -C {session.repo_path} log --stat {session.branch}`",
        "",
    ]
    return "\n".join(lines)


def _final_code(winner: Candidate | None) -> list[str]:
    lines = ["## Final code", ""]
    if winner is None or winner.code is None:
        return [*lines, "No candidate produced code.", ""]
    lines += [_fence(winner.code), "", "| test | suite | outcome | time |", "|---|---|---|---|"]
    for case in winner.report.cases:
        lines.append(
            f"| {_code_cell(case.name)} | {case.suite} | {_MARK.get(case.outcome, '')} {case.outcome} | {case.duration_s * 1000:.0f} ms |"
        )
    for case in winner.report.failures()[:6]:
        lines += ["", f"`{case.name}`:", "", _fence(case.message.strip()[-1200:] or "(no message)", "text")]
    return [*lines, ""]


def _approach(run: DebateRun, session: SessionRecord, winner: Candidate | None) -> list[str]:
    outcome = session.outcome or {}
    lines = ["## Chosen approach", ""]
    if winner is None:
        return [*lines, f"None: {_inline(outcome.get('reason', 'no agent produced code'))}.", ""]
    label = f" ({_inline(winner.label)})" if winner.label and winner.label != winner.agent_id else ""
    lines.append(
        f"**{winner.agent_id}**{label} wins by {outcome.get('method', '?')}: {_inline(outcome.get('reason', ''))}."
    )
    vote = outcome.get("vote")
    if vote:
        tallies = ", ".join(f"{k} {v:g}" for k, v in vote.get("tallies", {}).items())
        lines.append(
            f"Vote ({vote.get('method')}): {tallies}; share {vote.get('share')}, threshold reached: {vote.get('threshold_reached')}."
        )
    if outcome.get("explanation"):
        lines += ["", "Reasoning (Teacher):", "", _fence(str(outcome["explanation"]), "text")]
    if run.state.plan:
        lines += ["", "Plan (Designer, CPDE):", "", _fence(run.state.plan, "text")]
    if run.state.clarifications:
        lines += ["", "Clarifications settled before coding:"]
        lines += [
            f"- \\[{_inline(c['category'])}\\] {_inline(c['question'])} → {_inline(c['answer'])}"
            for c in run.state.clarifications
        ]
    return [*lines, ""]


def _alternatives(run: DebateRun, winner: Candidate | None) -> list[str]:
    lines = ["## Rejected alternatives", ""]
    others = [c for c in run.ranking() if c is not winner]
    others += [c for c in run.state.alternatives if c.code]
    if not others:
        return [*lines, "None: every candidate converged on the chosen code.", ""]
    lines += ["| candidate | tests | why not chosen |", "|---|---|---|"]
    for candidate in others:
        name = candidate.agent_id + (
            f" ({_inline(candidate.label)})" if candidate.label and candidate.label != candidate.agent_id else ""
        )
        if winner is not None and candidate.score() < winner.score():
            why = "passes fewer tests"
        elif candidate in run.state.alternatives:
            why = "not adopted: a test regressed, or its sibling version did better"
        else:
            why = "lost the vote"
        lines.append(f"| {name} | {_tests_line(candidate.report)} | {why} |")
    return [*lines, ""]


def _dissents(run: DebateRun) -> list[str]:
    lines = ["## Dissents", ""]
    if not run.state.dissents:
        return [*lines, "None recorded.", ""]
    for dissent in run.state.dissents:
        lines.append(f"- **{dissent.role}** ({dissent.agent}, {dissent.phase}): {_inline(dissent.text)}")
    return [*lines, ""]


def _risks(run: DebateRun, winner: Candidate | None) -> list[str]:
    lines = ["## Risk register", "", "| source | severity | risk | status |", "|---|---|---|---|"]
    risks = list(run.state.risks)
    if winner is not None:
        for case in winner.report.failures():
            risks.append(
                Risk(
                    source=f"{case.suite} tests",
                    severity="high" if case.suite == "visible" else "medium",
                    description=f"{case.name} {case.outcome}",
                    status="open",
                )
            )
    if not risks:
        return [*lines[:2], "No risks recorded: every attack was handled and every test passes.", ""]
    for risk in risks:
        lines.append(
            f"| {_inline(risk.source)} | {_inline(risk.severity)} | {_inline(risk.description)} | {_inline(risk.status)} |"
        )
    return [*lines, ""]


def _record(run: DebateRun, turns: list[TurnRecord]) -> list[str]:
    lines = ["## Candidates", "", "| agent | role | versions | final tests | from |", "|---|---|---|---|---|"]
    for agent in run.agents:
        candidate = run.state.candidates.get(agent.id)
        if candidate is None:
            continue
        history = run.state.history.get(agent.id, [])
        lines.append(
            f"| {agent.id} | {agent.role.name} | {sum(1 for c in history if c.code)} | {_tests_line(candidate.report)} | {candidate.phase} r{candidate.round} |"
        )
    if run.state.reviews:
        lines += ["", "## Reviews", "", "| round | reviewer | satisfaction | concerns |", "|---|---|---|---|"]
        for review in run.state.reviews:
            lines.append(
                f"| {review.round} | {review.reviewer} | {review.satisfaction} | {_inline('; '.join(review.concerns[:3])[:300])} |"
            )
    lines += [
        "",
        "## Turns",
        "",
        "| # | round | phase | agent | kind | status | tokens | time | tests |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for turn in turns:
        tests = ""
        if turn.test_results:
            tests = _tests_line(TestReport.model_validate(turn.test_results))
        if turn.metadata.get("kind") == "vote":
            tests = f"vote: {turn.metadata.get('vote') or 'abstain'}"
        lines.append(
            f"| {turn.seq} | {turn.round} | {turn.phase} | {turn.agent_id} | {turn.metadata.get('kind', '')} | {turn.status} | "
            f"{turn.prompt_tokens}+{turn.completion_tokens} | {turn.response_time_ms} ms | {tests} |"
        )
    lines += ["", "## Transcript", ""]
    for turn in turns:
        lines += [
            f"<details><summary>#{turn.seq} {turn.phase} · {turn.agent_id} · {turn.metadata.get('kind', '')} · round {turn.round} · {turn.status}</summary>",
            "",
            _fence(turn.content.rstrip() or "(empty reply)", "text"),
            "",
            "</details>",
            "",
        ]
    return lines
