"""Convergence: when the debate loop stops, and which candidate wins.

Passing tests decide. The loop stops when the leader passes every visible and
trusted exchanged test (and the reviewers are satisfied, when reviews run),
after ``convergence.patience`` rounds without improvement, on a stalemate of
satisfaction scores, or at ``rounds``. The final pick is the candidate passing
the most tests (visible, then exchanged, then Red's). Distinct candidates tied
at the top are ranked by behaviour (``convergence.ranking = "behaviour"``, the
default): each runs on generated inputs, and the one that agrees with most of the
others wins, an error agreeing with nothing (``protocol/behaviour.py``, method
``behaviour``), the same ranking vote and the benchmarks use. With ``ranking =
"vote"``, or when no input can be generated, they go to a vote by the method
``convergence.voting`` names (``auto``: unanimous below 3 voters, weighted for
3-5, Borda for 6+). The vote has converged when the winner's share reaches
``convergence.vote_threshold``.
After an early stop the tied candidates already agree on every probe, so
nobody votes: the first in ranking order wins (method ``agreement``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from debatecode.agents.agent import Agent
from debatecode.hooks import HookPoint
from debatecode.protocol.behaviour import rank_by_behaviour
from debatecode.protocol.events import VoteCast
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.replies import parse_ranking
from debatecode.protocol.run import DebateRun, gather_all
from debatecode.protocol.settings import ConvergenceSettings
from debatecode.protocol.state import Candidate, Dissent, Outcome, RankedCandidate, VoteSummary
from debatecode.protocol.validation import validate
from debatecode.voting import Ballot, choose_method

__all__ = ["CodeRoundCheck", "ConvergencePhase", "VoteDecision", "cast_vote", "check_convergence", "round_vote"]

_VOTERS = frozenset({"contrarian", "judge"})
"""Roles that vote without a candidate of their own."""


@dataclass(frozen=True)
class VoteDecision:
    """What a vote decided; nothing is written to the session's state until a phase adopts it."""

    winner: Candidate
    outcome: Outcome
    dissents: list[Dissent]


def _normalised(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


def check_convergence(
    run: DebateRun,
    round_no: int,
    history: list[tuple[tuple[int, ...], float]],
    settings: ConvergenceSettings,
    *,
    satisfaction_target: int | None,
) -> str | None:
    """Why the debate loop should stop after ``round_no``, or None to go on.

    ``history`` holds, per finished round, the leader's test score and the mean
    satisfaction; this function appends the current round to it.
    ``satisfaction_target`` is the reviewers' target, None when the review phase is off.
    """
    leader = run.leader()
    round_scores = [r.satisfaction for r in run.state.reviews if r.round == round_no]
    mean = sum(round_scores) / len(round_scores) if round_scores else 0.0
    history.append((leader.score() if leader else (0, 0, 0, 0), mean))
    if leader is not None and leader.all_visible_pass() and leader.report.all_passed:
        reviews_on = satisfaction_target is not None and round_scores
        if not reviews_on or min(round_scores) >= (satisfaction_target or 0):
            return "converged: the leader passes every visible and exchanged test" + (
                " and every reviewer is satisfied" if reviews_on else ""
            )
    patience = settings.patience
    if len(history) > patience:
        before = history[-patience - 1]
        if all(score <= before[0] and sat <= before[1] for score, sat in history[-patience:]):
            return f"no improvement for {patience} rounds"
    tracker = run.deps.satisfaction
    if tracker is not None and round_scores and tracker.stalemate(round_no):
        return "stalemate: satisfaction has not progressed for 3 rounds"
    return None


async def round_vote(run: DebateRun, round_no: int, settings: ConvergenceSettings, *, rounds: int) -> str | None:
    """When several distinct candidates pass every test, vote; a share at the threshold ends the loop.

    No vote after the last round (``rounds``): the loop ends anyway and the final choice votes.
    """
    if round_no >= rounds or settings.voting == "majority":
        return None
    passing = [c for c in run.ranking(unblocked=True) if c.report.all_passed]
    distinct: dict[str, Candidate] = {}
    for candidate in passing:
        distinct.setdefault(_normalised(candidate.code or ""), candidate)
    if len(distinct) < 2:
        return None
    vote = (await cast_vote(run, list(distinct.values()), [], settings, attempt=0, round_no=round_no)).outcome.vote
    if vote is not None and vote.threshold_reached:
        return f"converged: the vote reached its threshold ({vote.share} >= {settings.vote_threshold})"
    return None


@dataclass(frozen=True)
class CodeRoundCheck:
    """Why the code debate's loop stops after a round (tests, progress, stalemate, then a vote), or None."""

    settings: ConvergenceSettings
    satisfaction_target: int | None
    """The reviewers' target (``review.satisfaction_target``); None when the review phase is off."""
    rounds: int
    """The debate's rounds at most: no round vote after the last one."""
    vote: bool = True
    """``phases.convergence``: a round's passing candidates may vote the loop to an end."""

    async def __call__(self, run: DebateRun, round_no: int, history: list[Any]) -> str | None:
        reason = check_convergence(run, round_no, history, self.settings, satisfaction_target=self.satisfaction_target)
        if reason is None and self.vote:
            reason = await round_vote(run, round_no, self.settings, rounds=self.rounds)
        return reason


class ConvergencePhase(Phase):
    name = "convergence"

    def __init__(self, settings: ConvergenceSettings | None = None) -> None:
        self.settings = settings or ConvergenceSettings()

    async def execute(self, run: DebateRun, round_no: int) -> str:
        ranked = run.ranking(unblocked=True)
        ranking = [
            RankedCandidate(agent=c.agent_id, passed=c.passed, total=c.report.total, score=list(c.score()))
            for c in ranked
        ]
        if not ranked:
            run.state.outcome = Outcome(winner=None, method="none", ranking=ranking, reason="no agent produced code")
            return "no candidate has code"
        excluded: list[str] = []
        while True:
            winner = await self._choose(run, ranked, ranking, attempt=len(excluded))
            await validate(run, HookPoint.POST_CONVERGENCE, [winner])
            remaining = [c for c in ranked if c is not winner]
            if not winner.blocked or not remaining:
                break
            excluded.append(winner.agent_id)
            ranked = remaining
        outcome = run.state.outcome
        if excluded:
            outcome.reason += f" (blocked by a validation, passed over: {', '.join(excluded)})"
        if winner.blocked:
            outcome.blocked = True
            outcome.reason += " (every candidate fails a blocking validation; this is the best of them)"
        await self._teach(run, winner, run.ranking())
        return f"{winner.agent_id} wins ({outcome.method}): {outcome.reason}"

    async def _choose(
        self, run: DebateRun, ranked: list[Candidate], ranking: list[RankedCandidate], attempt: int
    ) -> Candidate:
        top = [c for c in ranked if c.score() == ranked[0].score()]
        distinct: dict[str, Candidate] = {}
        for candidate in top:
            distinct.setdefault(_normalised(candidate.code or ""), candidate)
        if len(distinct) == 1:
            reason = "passes the most tests" if len(top) == 1 else f"{len(top)} agents converged on the same code"
            run.state.outcome = _outcome(top[0], "most_tests", ranking, reason)
            return top[0]
        if run.state.stop_reason.startswith("early stop"):
            # The tied candidates gave identical results on every probe: a vote would only spend tokens.
            reason = (
                f"tied on tests at {top[0].passed}/{top[0].report.total}; the candidates agree on every probe"
                " (early stop), so no vote: the first in ranking order wins"
            )
            run.state.outcome = _outcome(top[0], "agreement", ranking, reason)
            return top[0]
        settings = self.settings
        if settings.ranking == "behaviour":
            by_behaviour = await rank_by_behaviour(
                run, top, phase=self.name, kind=f"behaviour-{attempt + 1}", limit=settings.ranking_inputs
            )
            if by_behaviour is not None:
                winner = by_behaviour.candidates[0]
                reason = f"tied on tests at {winner.passed}/{winner.report.total}; {by_behaviour.reason()}"
                run.state.outcome = _outcome(winner, "behaviour", ranking, reason)
                return winner
        if settings.voting == "majority":
            return self._majority(run, top, ranking)
        decision = await cast_vote(run, list(distinct.values()), ranking, settings, attempt)
        run.state.outcome = decision.outcome
        run.state.dissents.extend(decision.dissents)
        return decision.winner

    def _majority(self, run: DebateRun, top: list[Candidate], ranking: list[RankedCandidate]) -> Candidate:
        """The most frequent code among the tied candidates (ties: the earliest agent); no model is asked."""
        counts: dict[str, list[Candidate]] = {}
        for candidate in top:
            counts.setdefault(_normalised(candidate.code or ""), []).append(candidate)
        largest = max(len(group) for group in counts.values())
        winner = next(group[0] for group in counts.values() if len(group) == largest)
        reason = (
            f"tied on tests at {winner.passed}/{winner.report.total}; majority: {largest} of {len(top)} samples agree"
        )
        run.state.outcome = _outcome(winner, "majority", ranking, reason)
        run.state.outcome.vote = VoteSummary(
            method="majority",
            tallies={g[0].agent_id: float(len(g)) for g in counts.values()},
            share=round(largest / len(top), 3),
            threshold_reached=largest / len(top) >= self.settings.vote_threshold,
        )
        return winner

    async def _teach(self, run: DebateRun, winner: Candidate, ranked: list[Candidate]) -> None:
        teacher = run.first_with_role("teacher")
        if teacher is None:
            return
        alternatives = [
            {
                "agent": c.agent_id,
                "passed": c.passed,
                "total": c.report.total,
                "reason": "fewer tests pass" if c.score() < winner.score() else "lost the vote",
            }
            for c in ranked
            if c is not winner
        ]
        prompt = teacher.prompt(
            "teach",
            run.task,
            code=winner.code,
            passed=winner.passed,
            total=winner.report.total,
            alternatives=alternatives,
            **run.context(),
        )
        turn = await run.ask(teacher, prompt, phase=self.name, round_no=0, kind="explain", needs_reasoning=False)
        await run.record(turn)
        run.state.outcome.explanation = prompt.full_reply(turn.content).strip().lstrip("#").strip()


async def cast_vote(
    run: DebateRun,
    options: list[Candidate],
    ranking: list[RankedCandidate],
    settings: ConvergenceSettings,
    attempt: int = 0,
    round_no: int = 0,
) -> VoteDecision:
    """Every agent with a candidate (and the Contrarian and Judge) ranks ``options``; ``settings.voting`` counts.

    The ballots are journaled turns; the result is returned, not written to the session's state.
    """
    voters = [a for a in run.agents if a.id in run.state.candidates or a.role.name in _VOTERS]
    ballots = await gather_all(*(_ballot(run, agent, options, attempt, round_no) for agent in voters))
    configured = settings.voting
    method = choose_method(len(voters), None if configured in ("auto", "majority") else configured)
    result = method.tally([c.agent_id for c in options], list(ballots))
    winner = next(c for c in options if c.agent_id == result.winner)
    total_weight = sum(b.weight for b in ballots if b.ranking) or 1.0
    first_choice = sum(b.weight for b in ballots if b.ranking and b.ranking[0] == winner.agent_id)
    share = first_choice / total_weight
    tally = ", ".join(f"{agent_id} {votes:g}" for agent_id, votes in result.tallies.items())
    reason = f"tied on tests at {winner.passed}/{winner.report.total}; {result.method} vote: {tally}"
    if result.fallback_used:
        reason += f" ({result.method} fell back: {'Condorcet cycle, Borda used' if result.method == 'condorcet' else 'no consensus, plurality used'})"
    if result.tie_broken:
        reason += " (tie broken by agent order)"
    outcome = _outcome(winner, "vote", ranking, reason)
    threshold = settings.vote_threshold
    outcome.vote = VoteSummary.model_validate(
        {**result.model_dump(mode="json"), "share": round(share, 3), "threshold_reached": share >= threshold}
    )
    dissents = [
        Dissent(
            role=run.agent(ballot.voter).role.name,
            agent=ballot.voter,
            phase=ConvergencePhase.name,
            text=f"voted for {ballot.ranking[0]}",
        )
        for ballot in ballots
        if ballot.ranking and ballot.ranking[0] != winner.agent_id
    ]
    return VoteDecision(winner, outcome, dissents)


async def _ballot(run: DebateRun, agent: Agent, options: list[Candidate], attempt: int, round_no: int) -> Ballot:
    top = options[0]
    prompt = agent.prompt("vote", run.task, options=options, passed=top.passed, total=top.report.total, **run.context())
    kind = "vote" if attempt == 0 else f"vote-{attempt + 1}"
    turn = await run.ask(
        agent, prompt, phase=ConvergencePhase.name, round_no=round_no, kind=kind, needs_reasoning=prompt.style == "chat"
    )
    order = parse_ranking(prompt.full_reply(turn.content), len(options))
    ranking = [options[i].agent_id for i in order]
    own = run.state.candidates.get(agent.id)
    weight = 0.5 + 0.5 * own.report.pass_rate if own is not None else 0.5
    await run.record(
        turn.model_copy(
            update={
                "metadata": {
                    **turn.metadata,
                    "vote": ranking[0] if ranking else None,
                    "ranking": ranking,
                    "weight": weight,
                }
            }
        )
    )
    run.bus.emit(VoteCast(run.session_id, agent.id, ranking[0] if ranking else None, [c.agent_id for c in options]))
    return Ballot(voter=agent.id, ranking=ranking, weight=weight)


def _outcome(winner: Candidate, method: str, ranking: list[RankedCandidate], reason: str) -> Outcome:
    return Outcome(
        winner=winner.agent_id,
        version_id=winner.version_id,
        turn_id=winner.turn_id,
        passed=winner.passed,
        total=winner.report.total,
        method=method,
        reason=reason,
        ranking=ranking,
        label=winner.label,
    )
