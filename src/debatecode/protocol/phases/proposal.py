"""Proposal: candidates enter the debate, with the Moonshot's and the Contrarian's voices.

Authors without a candidate yet (self-evolvement off) write one now, each
independently: nobody sees another's code in this phase. Under CPDE the
Designer's plan comes first and implementers follow it. The Moonshot adds an
ambitious version and a pragmatic stepping stone, both tested; the better
one is its candidate. The Contrarian argues against the emerging leader, and
its objection is kept as a dissent.
"""

from __future__ import annotations

from typing import Any

from debatecode.agents.agent import Agent
from debatecode.hooks import HookPoint
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.replies import parse_objection, python_blocks
from debatecode.protocol.run import DebateRun, gather_all
from debatecode.protocol.state import Candidate, Dissent
from debatecode.protocol.validation import validate

__all__ = ["ProposalPhase", "draft_candidate", "draft_candidates", "ensure_plan", "leader_context"]


async def ensure_plan(run: DebateRun) -> None:
    """Under CPDE, have the Designer write the plan once (before the first code)."""
    if run.state.planning_style != "cpde" or run.state.plan is not None:
        return
    designer = run.first_with_role("designer")
    if designer is None:
        return
    prompt = designer.prompt("plan", run.task, **run.context())
    turn = await run.ask(designer, prompt, phase="proposal", round_no=0, kind="plan", needs_reasoning=False)
    turn = await run.record(turn)
    run.state.plan = prompt.full_reply(turn.content).strip() or None


async def draft_candidate(run: DebateRun, agent: Agent, phase: str) -> Candidate:
    """An author's first candidate, tested and committed."""
    return (await draft_candidates(run, [agent], phase))[0]


async def draft_candidates(run: DebateRun, authors: list[Agent], phase: str, *, kind: str = "draft") -> list[Candidate]:
    """The authors' drafts (journaled as ``kind``), tested and committed; authors sharing a model, a prompt and a
    temperature are sampled together (``SessionRun.ask_together``: one batched decode on a local model)."""
    asks = [(agent, agent.prompt("draft", run.task, len(run.authors()), **run.context(agent.id))) for agent in authors]
    turns = await run.ask_together(asks, phase=phase, round_no=0, kind=kind, want_code=True)
    return await gather_all(*(run.evaluate(agent, turn) for agent, turn in zip(authors, turns, strict=True)))


def leader_context(run: DebateRun) -> dict[str, Any]:
    leader = run.leader()
    if leader is None:
        return {"leader": None}
    return {"leader": leader.code, "leader_passed": leader.report.passed, "leader_total": leader.report.total}


class ProposalPhase(Phase):
    name = "proposal"

    async def execute(self, run: DebateRun, round_no: int) -> str:
        await ensure_plan(run)
        missing = [a for a in run.authors() if a.id not in run.state.candidates]
        for candidate in await draft_candidates(run, missing, self.name) if missing else []:
            run.state.adopt(candidate)
        notes = [f"{len(run.authors())} authors' candidates"]
        moonshot = run.first_with_role("moonshot")
        if moonshot is not None:
            notes.append(await self._moonshot(run, moonshot))
        contrarian = run.first_with_role("contrarian")
        if contrarian is not None:
            notes.append(await self._contrarian(run, contrarian))
        outcomes = await validate(run, HookPoint.POST_PROPOSAL, list(run.state.candidates.values()))
        blocked = sum(1 for o in outcomes if o.blocked)
        if outcomes:
            notes.append(f"validations: {len(outcomes) - blocked} clear, {blocked} blocked")
        passing = sum(1 for c in run.state.candidates.values() if c.all_visible_pass())
        return "; ".join(notes) + f"; {passing} pass every visible test"

    async def _moonshot(self, run: DebateRun, agent: Agent) -> str:
        prompt = agent.prompt("moonshot", run.task, **run.context(agent.id), **leader_context(run))
        turn = await run.ask(agent, prompt, phase=self.name, round_no=0, kind="moonshot", want_code=True)
        blocks = python_blocks(turn.content) if prompt.style == "chat" else []
        stepping = blocks[1] if len(blocks) > 1 else None
        if turn.code is not None and len(blocks) > 1:
            turn = turn.model_copy(update={"code": blocks[0]})
        ambitious = await run.evaluate(agent, turn, label="moonshot")
        options = [ambitious]
        if stepping is not None:
            options.append(await run.evaluate_code(agent, turn, stepping, label="stepping stone"))
        order = {id(c): i for i, c in enumerate(options)}
        best = sorted(options, key=lambda c: (tuple(-x for x in c.score()), order[id(c)]))[0]
        run.state.adopt(best)
        for other in options:
            if other is not best:
                run.state.alternatives.append(other)
        if stepping is None:
            return f"moonshot {ambitious.report.passed}/{ambitious.report.total}"
        return f"moonshot {ambitious.report.passed}/{ambitious.report.total}, stepping stone {options[1].report.passed}/{options[1].report.total}"

    async def _contrarian(self, run: DebateRun, agent: Agent) -> str:
        prompt = agent.prompt("contrarian", run.task, **run.context(), **leader_context(run))
        turn = await run.ask(agent, prompt, phase=self.name, round_no=0, kind="object", needs_reasoning=True)
        objection = parse_objection(prompt.full_reply(turn.content))
        await run.record(turn.model_copy(update={"metadata": {**turn.metadata, "objection": objection}}))
        if objection and not objection.lower().startswith("none"):
            run.state.dissents.append(Dissent(role="contrarian", agent=agent.id, phase=self.name, text=objection))
        return "contrarian objects" if objection else "contrarian silent"
