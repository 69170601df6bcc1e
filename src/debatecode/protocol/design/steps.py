"""The steps of a design debate, in order: analysis → positions → [arguments → rebuttals → moderation] × rounds.

- **analysis** (moderator): the question's domain, constraints and complexity
  (which sets the rounds), a clarifying question when the question is vague
  (``clarify.py``), and the perspectives: 2-4 from the catalog (or the
  council), the four cross-cutting specialists, the Contrarian and the Moonshot.
- **positions** (phase 1): every debater answers alone, in parallel, seeing
  nobody else's view.
- **arguments** (each round): every debater responds to the debate so far,
  in parallel.
- **rebuttals** (each round): one after another, in speaking order (domain
  perspectives shuffled, cross-cutting ones last), each seeing every argument
  and rebuttal of the round so far.
- **moderation** (each round): the moderator summarises; a convergence poll
  runs when a debater asked for synthesis; the gate reviewer checks the round.

A speech that challenges nobody (a rubber stamp) is rejected and asked again,
once. The synthesis steps that follow the loop are in ``synthesis.py``.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any

from debatecode._concurrency import gather_all
from debatecode.agents.agent import Agent
from debatecode.agents.design_prompts import DesignKind
from debatecode.agents.perspectives import Perspective, complexity_rounds
from debatecode.agents.roles import RoleSpec
from debatecode.protocol.design.clarify import clarify
from debatecode.protocol.design.files import DebateFiles
from debatecode.protocol.design.gate import (
    GateDecision,
    GateThresholds,
    decide,
    fundamental_disagreement,
    review_round,
    tally_poll,
)
from debatecode.protocol.design.panel import select_panel
from debatecode.protocol.design.records import Position, QuestionAnalysis, RoundRecord
from debatecode.protocol.design.relevance import relevance_for
from debatecode.protocol.design.replies import Speech, parse_analysis, parse_poll_answer, parse_speech
from debatecode.protocol.design.run import MODERATOR, DesignRun
from debatecode.protocol.ordering import AgentOrdering
from debatecode.protocol.reply_quality import is_rubber_stamp
from debatecode.store.records import TurnRecord

if TYPE_CHECKING:
    from debatecode.config import DebateConfig
    from debatecode.llm.client import LLMClient

__all__ = [
    "AnalysisStep",
    "ArgumentsStep",
    "DesignStep",
    "ModerationStep",
    "PositionsStep",
    "RebuttalsStep",
    "debater_agent",
    "design_round_check",
    "thresholds",
]

_NO_CHALLENGE_NUDGE = (
    "Your reply was rejected: it challenges no other debater. Name at least one other debater in a "
    "'Challenge:' line and say what you disagree with and why. Agreeing without reasons is not allowed."
)


_NO_SCORE_NUDGE = (
    "Your reply was rejected: it has no 'Satisfaction: <0-100>' line. Give your reply again in the format, "
    "with a number from 0 to 100 saying how satisfied you are with where the debate stands."
)


class DesignStep(abc.ABC):
    """One step of a design debate. Steps keep no state of their own: it all lives in the run."""

    name: str = "abstract"

    @abc.abstractmethod
    async def execute(self, run: DesignRun, round_no: int) -> str:
        """Run the step and return a one-line summary for the transcript."""


def thresholds(run: DesignRun) -> GateThresholds:
    design = run.design
    return GateThresholds(
        target=design.target_satisfaction,
        repetition=design.repetition,
        min_progress=design.min_progress,
        progress_window=design.progress_window,
        poll_share=design.poll_share,
    )


def debater_agent(perspective: Perspective, index: int, config: DebateConfig, llm: LLMClient) -> Agent:
    """The debater holding ``perspective`` (its id is the perspective's key)."""
    role = RoleSpec(name=perspective.key, title=perspective.name, focus=perspective.prompt, concern=perspective.concern)
    return Agent(
        id=perspective.key,
        role=role,
        model=config.model,
        prompt_style=llm.prompt_style(config.model),
        temperature=config.llm.temperature,
        seed=config.llm.seed + index,
    )


def moderator_agent(config: DebateConfig, llm: LLMClient) -> Agent:
    from debatecode.agents.roles import get_role

    model = config.models.get("moderator", config.model)
    return Agent(
        id=MODERATOR,
        role=get_role("moderator"),
        model=model,
        prompt_style=llm.prompt_style(model),
        temperature=0.0,
        seed=config.llm.seed,
    )


def _reply_tokens(run: DesignRun) -> int:
    """Tokens a speech may take: about 1.5 per word asked for, plus the format's labels."""
    return run.design.reply_words * 3 // 2 + 60


def _files(run: DesignRun) -> DebateFiles | None:
    return run.files


class AnalysisStep(DesignStep):
    """The moderator reads the question and picks the perspectives."""

    name = "analysis"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        design = run.design
        reading = await run.say(
            run.moderator, "analyse", phase=self.name, round_no=0, stage="moderator", max_tokens=160
        )
        await run.record(reading)
        decision, constraints = parse_analysis(reading.content)
        clarification = await clarify(run)

        async def choose() -> TurnRecord:
            selection = select_panel(
                design, run.state.question, clarification=clarification.settled if clarification else ""
            )
            rounds = complexity_rounds(selection.complexity, design.min_rounds, design.max_rounds)
            analysis = QuestionAnalysis(
                domain=selection.domain,
                constraints=[*selection.constraints, *(c for c in constraints if c not in selection.constraints)],
                complexity=selection.complexity,
                rounds=rounds,
                perspectives=selection.keys,
                reason=selection.reason_lines(),
            )
            return run.tool_turn(
                round_no=0,
                phase=self.name,
                agent_id=MODERATOR,
                role="moderator",
                kind="perspectives",
                content=f"{len(selection.keys)} perspectives, {rounds} rounds planned ({selection.complexity} complexity)\n"
                + selection.reason_lines(),
                metadata={
                    "analysis": analysis.model_dump(mode="json"),
                    "perspectives": [p.model_dump(mode="json") for p in selection.chosen],
                    "decision": decision,
                },
            )

        chosen = await run.record(await run.journal.replay_or_do("r0/analysis/moderator/perspectives", choose))
        run.state.analysis = QuestionAnalysis.model_validate(chosen.metadata["analysis"])
        run.state.decision_text = str(chosen.metadata.get("decision") or "")
        perspectives = [Perspective.model_validate(p) for p in chosen.metadata["perspectives"]]
        run.state.perspectives = {p.key: p for p in perspectives}
        known = {a.id for a in run.agents}
        for index, perspective in enumerate(perspectives, start=1):
            if perspective.key not in known:
                run.agents.append(debater_agent(perspective, index, run.config, run.deps.llm))
        files = _files(run)
        if files is not None:
            files.write_metadata(
                {
                    "perspectives": [p.name for p in perspectives],
                    "council": design.council,
                    "clarification": clarification.model_dump(mode="json") if clarification else None,
                    "domain": run.state.analysis.domain,
                    "complexity": run.state.analysis.complexity,
                    "rounds_planned": run.state.analysis.rounds,
                }
            )
        names = ", ".join(p.name for p in perspectives)
        return f"{names}; {run.state.analysis.rounds} rounds planned"


def _position(run: DesignRun, turn: TurnRecord, agent: Agent, round_no: int, kind: str) -> tuple[Position, Speech]:
    speech = parse_speech(turn.content, run.state.names(), own=agent.id)
    position = Position(
        perspective=agent.id,
        agent=agent.id,
        round=round_no,
        kind=kind,  # type: ignore[arg-type]
        text=turn.content.strip(),
        stance=speech.stance,
        satisfaction=speech.satisfaction,
        challenges=speech.challenges,
        risks=speech.risks,
        calls_poll=bool(speech.ready),
        rejected_as_rubber_stamp=bool(turn.metadata.get("rejected_retry")),
        turn_id=turn.id,
    )
    return position, speech


def _challenge_check(run: DesignRun, agent: Agent) -> Any:
    """A round speech must challenge another debater by name and carry a satisfaction score; else it is re-asked once."""
    names = run.state.names()

    def acceptable(reply: str) -> str | None:
        speech = parse_speech(reply, names, own=agent.id)
        # A challenge names a debater, or at least disagrees in its own line: small models rarely name anyone.
        if is_rubber_stamp(reply) or not (speech.challenges or speech.challenge_line):
            return _NO_CHALLENGE_NUDGE
        if speech.satisfaction is None:
            return _NO_SCORE_NUDGE
        return None

    return acceptable


async def _speak(
    run: DesignRun, agent: Agent, kind: DesignKind, phase: str, round_no: int, **values: Any
) -> TurnRecord:
    """One debater's speech in round ``round_no`` (an argument or a rebuttal), with its status shown around it.

    The speech must challenge another debater and give a satisfaction score (else it is asked again,
    once), and may call a convergence poll; ``values`` are the rest of the prompt's inputs.
    """
    run.status(agent, "thinking", phase)
    turn = await run.say(
        agent,
        kind,
        phase=phase,
        round_no=round_no,
        stage=f"round{round_no}",
        max_tokens=_reply_tokens(run),
        acceptable=_challenge_check(run, agent),
        round=round_no,
        challenge=True,
        scored=True,
        poll=True,
        **values,
    )
    run.status(agent, "done", phase)
    return turn


class PositionsStep(DesignStep):
    """Phase 1: independent positions, in parallel; nobody sees another's."""

    name = "positions"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        debaters = run.debaters()

        async def one(agent: Agent) -> TurnRecord:
            run.status(agent, "thinking", self.name)
            turn = await run.say(
                agent, "position", phase=self.name, round_no=0, stage="positions", max_tokens=_reply_tokens(run)
            )
            run.status(agent, "done", self.name)
            return turn

        turns = await gather_all(*(one(agent) for agent in debaters))
        run.state.positions = []
        for agent, turn in zip(debaters, turns, strict=True):
            await run.record(turn)
            run.state.positions.append(_position(run, turn, agent, 0, "position")[0])
        files = _files(run)
        if files is not None:
            files.write_positions(run.state.positions, run.state.names())
        return f"{len(turns)} independent positions"


class ArgumentsStep(DesignStep):
    """Every debater responds to the debate so far, in parallel."""

    name = "arguments"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        debaters = run.debaters()
        history = run.window(round_no)
        previous = (
            run.state.rounds[round_no - 2].summary if round_no > 1 and len(run.state.rounds) >= round_no - 1 else ""
        )
        names = [p.name for p in run.state.perspectives.values()]

        turns = await gather_all(
            *(
                _speak(run, agent, "argue", self.name, round_no, history=history, summary=previous, debaters=names)
                for agent in debaters
            )
        )
        record = run.state.round(round_no)
        record.arguments = []
        for agent, turn in zip(debaters, turns, strict=True):
            await run.record(turn)
            record.arguments.append(_position(run, turn, agent, round_no, "argument")[0])
        return f"{len(turns)} arguments"


def speaking_order(run: DesignRun, round_no: int) -> list[Agent]:
    """Rebuttal order: domain perspectives shuffled (re-drawn every 3 rounds), cross-cutting ones last."""
    debaters = run.debaters()
    ordering = AgentOrdering({a.id: a.role.concern for a in debaters}, seed=run.config.llm.seed)
    by_id = {a.id: a for a in debaters}
    return [by_id[agent_id] for agent_id in ordering.order(round_no)]


class RebuttalsStep(DesignStep):
    """Rebuttals in sequence: each debater sees every argument and every earlier rebuttal of the round."""

    name = "rebuttals"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        record = run.state.round(round_no)
        record.rebuttals = []
        names = run.state.names()
        history = run.window(round_no)
        for agent in speaking_order(run, round_no):
            speeches = [
                {"name": names.get(p.perspective, p.perspective), "text": run.compact(p)}
                for p in [*record.arguments, *record.rebuttals]
            ]
            turn = await _speak(
                run,
                agent,
                "rebut",
                self.name,
                round_no,
                history=history,
                speeches=speeches,
                debaters=list(names.values()),
            )
            await run.record(turn)
            record.rebuttals.append(_position(run, turn, agent, round_no, "rebuttal")[0])
        return f"{len(record.rebuttals)} rebuttals"


class ModerationStep(DesignStep):
    """The moderator's summary, a convergence poll when one was called, and the gate reviewer's verdict."""

    name = "moderation"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        record = run.state.round(round_no)
        names = run.state.names()
        speeches = [
            {"name": names.get(p.perspective, p.perspective), "text": run.compact(p), "score": p.satisfaction}
            for p in [*record.arguments, *record.rebuttals]
        ]
        summary = await run.say(
            run.moderator,
            "summarise",
            phase=self.name,
            round_no=round_no,
            stage="moderator",
            max_tokens=220,
            speeches=speeches,
            round=round_no,
        )
        await run.record(summary)
        record.summary = " ".join(summary.content.split())
        design = run.design
        cap = round_cap(run, round_no)
        caller = next((p for p in [*record.rebuttals, *record.arguments] if p.calls_poll), None)
        if caller is not None and round_no >= min(design.min_rounds, cap):
            # Before the minimum rounds the debate goes on whatever the poll says: no poll is taken.
            record.poll = await _poll(run, round_no, caller.perspective, record.summary)
        flags = review_round(
            run.state.rounds[:round_no],
            question=run.state.question.text,
            context=run.state.question.context_text(),
            thresholds=thresholds(run),
            relevance=relevance_for(run.state.names(), getattr(run.config, "memory", None)),
        )
        record.flags = flags
        decision = decide(
            [r.flags for r in run.state.rounds[:round_no]],
            round_no=round_no,
            min_rounds=min(design.min_rounds, cap),
            max_rounds=cap,
            disagreement=fundamental_disagreement(record, design.target_satisfaction),
        )
        turn = run.tool_turn(
            round_no=round_no,
            phase="gate",
            agent_id="gate-reviewer",
            role="gate",
            kind="review",
            content=f"{decision.action}: {decision.reason}" + "".join(f"\n- {f.kind}: {f.detail}" for f in flags),
            metadata={
                "action": decision.action,
                "reason": decision.reason,
                "flags": [f.model_dump(mode="json") for f in flags],
            },
        )
        await run.record(turn)
        verdict = {"round": round_no, "action": decision.action, "reason": decision.reason, "scores": record.scores()}
        run.state.decisions.append(verdict)
        files = _files(run)
        if files is not None:
            files.write_round(record, names)
            files.write_convergence(
                {
                    "converged": decision.action == "synthesize"
                    and decision.reason.startswith(("consensus", "convergence poll")),
                    "reason": decision.reason,
                    "decision": decision.action,
                    "round": verdict,
                }
            )
        return f"{decision.action}: {decision.reason}"


def round_cap(run: DesignRun, round_no: int) -> int:
    """The last round of this debate as it stands after ``round_no``.

    The moderator plans rounds by the question's complexity. A debate still gaining (mean satisfaction up
    by ``min_progress`` or more since the previous round) at its planned end gets one more round, up to
    ``max_rounds``: the planned end escalates only a debate that has stopped moving. A round run on a
    person's guidance at an escalation is its own last round: after it the debate synthesizes or escalates again.
    """
    design = run.design
    if any(e.continued_in_round == round_no for e in run.state.continued):
        return round_no  # the one round a person's guidance at an escalation bought: the gate decides after it
    planned = run.state.analysis.rounds if run.state.analysis else design.max_rounds
    if round_no < planned or round_no >= design.max_rounds or round_no < 2:
        return planned if round_no < planned else min(max(planned, round_no), design.max_rounds)
    now, before = run.state.rounds[round_no - 1].scores(), run.state.rounds[round_no - 2].scores()
    if now and before and _mean(now) - _mean(before) >= design.min_progress:
        return round_no + 1
    return round_no


def _mean(scores: dict[str, int]) -> float:
    return sum(scores.values()) / len(scores)


async def _poll(run: DesignRun, round_no: int, caller: str, summary: str) -> Any:
    names = run.state.names()

    async def vote(agent: Agent) -> TurnRecord:
        return await run.say(
            agent,
            "poll",
            phase="poll",
            round_no=round_no,
            stage=f"round{round_no}",
            key_kind="vote",
            max_tokens=48,
            caller=names.get(caller, caller),
            summary=summary,
        )

    debaters = run.debaters()
    turns = await gather_all(*(vote(agent) for agent in debaters))
    votes: dict[str, bool] = {}
    for agent, turn in zip(debaters, turns, strict=True):
        await run.record(turn)
        answer = parse_poll_answer(turn.content)
        votes[agent.id] = bool(answer)  # no clear yes counts as no
    return tally_poll(round_no, caller, votes, thresholds(run))


async def design_round_check(run: DesignRun, round_no: int, history: list[Any]) -> str | None:
    """The gate reviewer's verdict after ``round_no``: None to go on, else why the loop stops."""
    verdict = next((d for d in reversed(run.state.decisions) if d["round"] == round_no), None)
    if verdict is None or verdict["action"] == "continue":
        return None
    return str(verdict["reason"])


def last_decision(run: DesignRun) -> GateDecision | None:
    """The gate reviewer's latest decision."""
    if not run.state.decisions:
        return None
    latest = run.state.decisions[-1]
    return GateDecision(action=latest["action"], reason=latest["reason"])


def round_of(run: DesignRun, round_no: int) -> RoundRecord | None:
    return run.state.rounds[round_no - 1] if 0 < round_no <= len(run.state.rounds) else None
