"""Critique, per DebateCoder: tests are the medium of the debate.

Each competitor writes test inputs meant to break an opponent's candidate
(opponents come from the topology). The *expected* output of each input comes
from running the attacker's own code in the sandbox, never from a model's
say-so; the opponent's code runs on the same inputs. The inputs become
exchanged tests, trusted only when their author's code passes every visible
test *and* a strict majority of the candidates passing every visible test
return the same value on that input: one author's output is a claim, the
agreement of independent passing candidates is evidence.
Where outputs disagree, the attacked agent gets a contrastive analysis prompt
(its code, the opponent's code, the disagreeing outputs), gives advice and
revises; the revision is kept only if it passes no fewer tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from debatecode.agents.agent import Agent
from debatecode.errors import ModelError
from debatecode.execution.generated import ExchangedTest
from debatecode.execution.probes import ProbeResult, parse_calls
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.run import DebateRun, gather_all
from debatecode.protocol.separation import separated_by_tests
from debatecode.protocol.settings import CritiqueSettings
from debatecode.protocol.state import Candidate

__all__ = ["CritiquePhase"]


@dataclass
class _Attack:
    attacker: str
    target: str
    calls: list[str]
    expected: list[ProbeResult]
    actual: list[ProbeResult]

    def disagreements(self) -> list[tuple[str, ProbeResult, ProbeResult]]:
        return [(e.call, e, a) for e, a in zip(self.expected, self.actual, strict=True) if not e.same_as(a)]


def _shown(result: ProbeResult) -> str:
    if result.outcome == "value":
        return f"returns {result.expected}"
    if result.outcome == "raises":
        return f"raises {result.expected}"
    return "times out"


def _ident(text: str) -> str:
    return re.sub(r"\W", "_", text)


class CritiquePhase(Phase):
    name = "critique"

    def __init__(self, settings: CritiqueSettings | None = None, *, tolerate_failures: bool = True) -> None:
        self.settings = settings or CritiqueSettings()
        self.tolerate_failures = tolerate_failures
        """``participants.tolerate_failures``: an attacker whose model fails is dropped while two competitors remain."""

    async def execute(self, run: DebateRun, round_no: int) -> str:
        competitors = [
            a for a in run.agents if a.id in run.state.candidates and run.state.candidates[a.id].code is not None
        ]
        if len(competitors) < 2:
            return "fewer than two candidates with code: nothing to exchange"
        if self.settings.when == "tied":
            separated = separated_by_tests([run.state.candidates[a.id] for a in competitors])
            if separated is not None:
                return f"skipped: {separated} (critique.when = tied)"
        pairs = self._pairs(run, competitors, round_no)
        attacks = [
            a
            for a in await gather_all(*(self._guarded(run, attacker, target, round_no) for attacker, target in pairs))
            if a
        ]
        attacks = [a for a in attacks if a.attacker in run.state.candidates and a.target in run.state.candidates]
        added = self._exchange(run, attacks, round_no, await self._agreement(run, attacks))
        await run.refresh()
        revisions = await gather_all(
            *(
                self._contrast(run, run.agent(target), attack, round_no)
                for target, attack in self._to_revise(attacks).items()
            )
        )
        adopted = sum(1 for candidate in revisions if run.state.adopt(candidate))
        disputed = await run.revalidate_exchanged()
        for call in disputed:
            run.state.add_risk("critique", f"agents disagree on {call}")
        await run.refresh()
        disagreeing = sum(1 for a in attacks if a.disagreements())
        return (
            f"{len(attacks)} attacks, {added} exchanged tests ({len(run.state.active_exchanged())} standing"
            f"{f', {len(disputed)} disputed' if disputed else ''}), {disagreeing} with disagreements, "
            f"{len(revisions)} contrastive revisions ({adopted} adopted)"
        )

    def _pairs(self, run: DebateRun, competitors: list[Agent], round_no: int) -> list[tuple[Agent, Agent]]:
        topology = run.deps.topology
        ids = [a.id for a in competitors]
        pairs: list[tuple[Agent, Agent]] = []
        for attacker in competitors:
            if topology is not None and attacker.id in topology:
                targets = [t for t in topology.neighbours(attacker.id) if t in ids and t != attacker.id]
            else:
                targets = [t for t in ids if t != attacker.id]
            if not targets:
                continue
            if self.settings.opponents == "one":
                targets = [targets[(round_no - 1) % len(targets)]]
            pairs.extend((attacker, run.agent(t)) for t in targets)
        return pairs

    async def _guarded(self, run: DebateRun, attacker: Agent, target: Agent, round_no: int) -> _Attack | None:
        """An attack; with ``participants.tolerate_failures``, an attacker whose model fails is dropped instead."""
        try:
            return await self._attack(run, attacker, target, round_no)
        except ModelError as exc:
            remaining = [a for a in run.state.candidates if a != attacker.id]
            if not self.tolerate_failures or len(remaining) < 2:
                raise
            run.drop_agent(attacker.id, f"{type(exc).__name__}: {exc}")
            return None

    async def _attack(self, run: DebateRun, attacker: Agent, target: Agent, round_no: int) -> _Attack:
        opponent = run.state.candidates[target.id]
        prompt = attacker.prompt(
            "attack",
            run.task,
            opponent_code=opponent.code,
            count=self.settings.inputs_per_attack,
            **run.context(),
        )
        turn = await run.ask(attacker, prompt, phase=self.name, round_no=round_no, kind=f"attack-{target.id}")
        calls = parse_calls(prompt.full_reply(turn.content), run.task.entry_point, self.settings.inputs_per_attack)
        own = run.state.candidates[attacker.id].code or ""
        expected = await run.workspace.probes.run(own, calls)
        actual = await run.workspace.probes.run(opponent.code or "", calls)
        attack = _Attack(attacker.id, target.id, calls, expected, actual)
        tool_calls = [
            {"tool": "probe", "call": e.call, "attacker_output": _shown(e), "target_output": _shown(a)}
            for e, a in zip(expected, actual, strict=True)
        ]
        await run.record(
            turn.model_copy(
                update={"tool_calls": tool_calls, "metadata": {**turn.metadata, "calls": calls, "target": target.id}}
            )
        )
        return attack

    async def _agreement(self, run: DebateRun, attacks: list[_Attack]) -> dict[tuple[str, str], bool]:
        """For each (attacker, call): whether a strict majority of the visible-passing candidates return the attacker's output.

        Every visible-passing candidate not already probed in the attack runs the calls (sandbox time, no tokens).
        """
        passing = {aid: c for aid, c in run.state.candidates.items() if c.code is not None and c.all_visible_pass()}
        agreed: dict[tuple[str, str], bool] = {}
        for attack in attacks:
            if attack.attacker not in passing:
                continue
            outputs: dict[str, list[ProbeResult]] = {attack.attacker: attack.expected}
            if attack.target in passing:
                outputs[attack.target] = attack.actual
            for aid, candidate in passing.items():
                if aid not in outputs:
                    outputs[aid] = await run.workspace.probes.run(candidate.code or "", attack.calls)
            for index, expected in enumerate(attack.expected):
                same = sum(1 for results in outputs.values() if results[index].same_as(expected))
                agreed[(attack.attacker, expected.call)] = same * 2 > len(passing)
        return agreed

    def _exchange(
        self, run: DebateRun, attacks: list[_Attack], round_no: int, agreed: dict[tuple[str, str], bool]
    ) -> int:
        known = {(t.call, t.author) for t in run.state.exchanged}
        added = 0
        for attack in attacks:
            author_passes = run.state.candidates[attack.attacker].all_visible_pass()
            for index, result in enumerate(attack.expected, start=1):
                if result.outcome == "timeout" or (result.call, attack.attacker) in known:
                    continue
                name = f"test_exchanged_r{round_no}_{_ident(attack.attacker)}_{_ident(attack.target)}_{index}"
                run.state.exchanged.append(
                    ExchangedTest(
                        name=name,
                        author=attack.attacker,
                        target=attack.target,
                        call=result.call,
                        outcome="value" if result.outcome == "value" else "raises",
                        expected=result.expected,
                        trusted=author_passes and agreed.get((attack.attacker, result.call), False),
                        round=round_no,
                    )
                )
                known.add((result.call, attack.attacker))
                added += 1
        return added

    @staticmethod
    def _to_revise(attacks: list[_Attack]) -> dict[str, _Attack]:
        """For each attacked agent, the attack with the most disagreements (if any)."""
        chosen: dict[str, _Attack] = {}
        for attack in attacks:
            if not attack.disagreements():
                continue
            best = chosen.get(attack.target)
            if best is None or len(attack.disagreements()) > len(best.disagreements()):
                chosen[attack.target] = attack
        return dict(sorted(chosen.items()))

    async def _contrast(self, run: DebateRun, agent: Agent, attack: _Attack, round_no: int) -> Candidate:
        mine = run.state.candidates[agent.id]
        theirs = run.state.candidates[attack.attacker]
        trusted = theirs.all_visible_pass()
        rows = [
            {
                "call": call,
                "mine": _shown(actual),
                "theirs": _shown(expected),
                "expected": _shown(expected) if trusted else "",
            }
            for call, expected, actual in attack.disagreements()
        ]
        prompt = agent.prompt(
            "contrast",
            run.task,
            len(run.authors()),
            code=mine.code,
            opponent=attack.attacker,
            opponent_code=theirs.code,
            disagreements=rows,
            report=mine.report,
            **run.context(agent.id),
        )
        turn = await run.ask(agent, prompt, phase=self.name, round_no=round_no, kind="contrast", want_code=True)
        turn = turn.model_copy(
            update={"metadata": {**turn.metadata, "against": attack.attacker, "disagreements": rows}}
        )
        return await run.evaluate(agent, turn)
