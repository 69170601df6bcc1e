"""Convergence: the candidate passing the most tests wins; ties go to a vote.

Passing tests decide. Only when several candidates pass the same, highest
number of tests (and differ in code) do the agents vote among them, by
plurality, with a deterministic tie-break on agent order.
"""

from __future__ import annotations

from debatecode.agents.agent import Agent
from debatecode.llm.parsing import extract_choice
from debatecode.protocol.events import VoteCast
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.run import Candidate, DebateRun, gather_all
from debatecode.voting import Ballot, Plurality

__all__ = ["ConvergencePhase"]


def _normalised(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


class ConvergencePhase(Phase):
    """Pick the final candidate."""

    name = "convergence"

    async def run(self, run: DebateRun) -> str:
        order = {a.id: i for i, a in enumerate(run.agents)}
        with_code = sorted(
            (c for c in run.candidates.values() if c.code is not None),
            key=lambda c: (-c.passed, order[c.agent_id]),
        )
        ranking = [{"agent": c.agent_id, "passed": c.passed, "total": c.report.total} for c in with_code]
        if not with_code:
            run.outcome = {"winner": None, "method": "none", "ranking": ranking, "reason": "no agent produced code"}
            return "no candidate has code"
        top = [c for c in with_code if c.passed == with_code[0].passed]
        distinct: dict[str, Candidate] = {}
        for candidate in top:
            distinct.setdefault(_normalised(candidate.code or ""), candidate)
        if len(distinct) == 1:
            winner = top[0]
            reason = "passes the most tests" if len(top) == 1 else f"{len(top)} agents converged on the same code"
            run.outcome = self._outcome(winner, "most_tests", ranking, reason)
            return f"{winner.agent_id} wins: {reason} ({winner.passed}/{winner.report.total})"
        options = list(distinct.values())
        ballots = await gather_all(*(self._vote(run, agent, options) for agent in run.agents))
        result = Plurality().tally([c.agent_id for c in options], list(ballots))
        winner = next(c for c in options if c.agent_id == result.winner)
        tally = ", ".join(f"{agent_id} {votes:g}" for agent_id, votes in result.tallies.items())
        reason = f"tied at {winner.passed}/{winner.report.total} tests; plurality vote: {tally}"
        if result.tie_broken:
            reason += " (vote tied; earliest agent wins)"
        run.outcome = self._outcome(winner, "vote", ranking, reason)
        run.outcome["vote"] = result.model_dump(mode="json")
        return f"{winner.agent_id} wins by vote: {reason}"

    async def _vote(self, run: DebateRun, agent: Agent, options: list[Candidate]) -> Ballot:
        top = options[0]
        prompt = agent.prompt(
            "vote",
            run.task,
            len(run.agents),
            options=options,
            passed=top.passed,
            total=top.report.total,
        )
        turn = await run.ask(agent, prompt, phase=self.name, round_no=0, kind="vote", want_code=False)
        choice = extract_choice(turn.content, len(options))
        chosen = options[choice].agent_id if choice is not None else None
        turn = turn.model_copy(
            update={"metadata": {**turn.metadata, "vote": chosen, "options": [c.agent_id for c in options]}}
        )
        await run.record(turn)
        run.bus.emit(VoteCast(run.session_id, agent.id, chosen, [c.agent_id for c in options]))
        return Ballot(voter=agent.id, ranking=[chosen] if chosen else [])

    @staticmethod
    def _outcome(winner: Candidate, method: str, ranking: list[dict[str, object]], reason: str) -> dict[str, object]:
        return {
            "winner": winner.agent_id,
            "version_id": winner.version_id,
            "turn_id": winner.turn_id,
            "passed": winner.passed,
            "total": winner.report.total,
            "method": method,
            "reason": reason,
            "ranking": ranking,
        }
