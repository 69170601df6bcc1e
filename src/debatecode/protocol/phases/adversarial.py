"""Adversarial Red/Blue: Red writes attacks as tests, Blue patches, at most ``adversarial.max_rounds`` rounds.

Red writes pytest tests against the leader: edge cases, boundary values,
malformed inputs, security probes. They run in the sandbox. Attacks the
leader already passes join the regression suite. For failing ones Blue rules
each VALID or INVALID under the task and patches the code. An attack stays in
the suite (so every later candidate must pass it) when Blue calls it valid or
its patch passes it; invalid ones are dropped. Each finding enters the risk
register as mitigated, open or rejected. The phase stops when Red finds
nothing new.
"""

from __future__ import annotations

import ast

from debatecode.agents.agent import Agent
from debatecode.execution.generated import RedTest, red_suite, rename_tests
from debatecode.execution.results import TestCaseResult
from debatecode.hooks import HookPoint
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.replies import parse_verdicts, python_blocks
from debatecode.protocol.run import DebateRun
from debatecode.protocol.settings import AdversarialSettings
from debatecode.protocol.state import Candidate, Risk
from debatecode.protocol.validation import validate

__all__ = ["AdversarialPhase"]

_ATTACKS_PER_ROUND = 4


class AdversarialPhase(Phase):
    name = "adversarial"

    def __init__(self, settings: AdversarialSettings | None = None) -> None:
        self.settings = settings or AdversarialSettings()

    async def execute(self, run: DebateRun, round_no: int) -> str:
        red = run.first_with_role("red")
        blue = run.first_with_role("blue")
        if red is None:
            return "no Red team"
        findings = fixed = rounds = 0
        for attack_round in range(1, self.settings.max_rounds + 1):
            leader = run.leader()
            if leader is None:
                break
            rounds = attack_round
            new_tests = await self._attack(run, red, leader, attack_round)
            if not new_tests:
                break
            report = await run.run_tests(leader.code, suites=(*run.state.suites(), red_suite(new_tests)))
            new_names = {t.name for t in new_tests}
            failing = {case.name: case for case in report.failures("red") if case.name in new_names}
            run.state.red_tests.extend(t for t in new_tests if t.name not in failing)
            if not failing:
                break
            findings += len(failing)
            attacks = [t for t in new_tests if t.name in failing]
            if blue is None:
                run.state.risks.extend(_risk(red.id, t, failing[t.name].message, "open") for t in attacks)
                continue
            fixed += await self._defend(run, blue, leader, attacks, failing, attack_round)
            await run.refresh()
        leader = run.leader()
        verdict = ""
        if leader is not None:
            outcomes = await validate(run, HookPoint.POST_ADVERSARIAL, [leader])
            verdict = "; validations " + ("blocked" if outcomes[0].blocked else "clear") if outcomes else ""
        return f"{rounds} rounds, {findings} failing attacks, {fixed} fixed, {len(run.state.red_tests)} in the regression suite{verdict}"

    async def _attack(self, run: DebateRun, red: Agent, leader: Candidate, attack_round: int) -> list[RedTest]:
        known = [t.name for t in run.state.red_tests]
        prompt = red.prompt("red", run.task, code=leader.code, known=known, count=_ATTACKS_PER_ROUND, **run.context())
        turn = await run.ask(red, prompt, phase=self.name, round_no=attack_round, kind="attack")
        reply = prompt.full_reply(turn.content)
        blocks = python_blocks(reply) if prompt.style == "chat" else []
        source, names = rename_tests("\n\n".join(blocks) if blocks else reply, f"test_red_{attack_round}")
        await run.record(turn.model_copy(update={"metadata": {**turn.metadata, "tests": names}}))
        return _split(source, names, attack_round) if names else []

    async def _defend(
        self,
        run: DebateRun,
        blue: Agent,
        leader: Candidate,
        attacks: list[RedTest],
        failing: dict[str, TestCaseResult],
        attack_round: int,
    ) -> int:
        items = [{"name": t.name, "code": t.code, "message": failing[t.name].message} for t in attacks]
        prompt = blue.prompt("blue", run.task, code=leader.code, attacks=items, **run.context(leader.agent_id))
        turn = await run.ask(blue, prompt, phase=self.name, round_no=attack_round, kind="defend", want_code=True)
        verdicts = parse_verdicts(turn.content)
        invalid = [t for t in attacks if verdicts.get(t.name) is False]
        contested = [t for t in attacks if verdicts.get(t.name) is not False]
        # Judge the patch against the attacks Blue did not reject.
        run.state.red_tests.extend(contested)
        patched = await run.evaluate(blue, turn, label="Blue patch")
        passes = patched.report.passed_names()
        fixed = 0
        for test in contested:
            mitigated = test.name in passes
            fixed += mitigated
            if not mitigated and verdicts.get(test.name) is not True:
                run.state.red_tests.remove(test)
            run.state.risks.append(_risk("red", test, failing[test.name].message, "mitigated" if mitigated else "open"))
        for test in invalid:
            run.state.risks.append(
                _risk("blue", test, "ruled invalid by Blue: " + _reason(turn.content, test.name), "rejected")
            )
        if patched.code is not None and patched.code.strip() != (leader.code or "").strip():
            patched.agent_id = leader.agent_id
            run.state.adopt(patched)
        return fixed


def _split(source: str, names: list[str], attack_round: int) -> list[RedTest]:
    """One RedTest per renamed function, each keeping the module's imports."""
    tree = ast.parse(source)
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    tests = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names:
            module = ast.Module(body=[*imports, node], type_ignores=[])
            tests.append(RedTest(name=node.name, code=ast.unparse(module) + "\n", round=attack_round))
    return tests


def _risk(source: str, test: RedTest, message: str, status: str) -> Risk:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    detail = next((line for line in lines if line.startswith("E ")), lines[-1] if lines else "")
    severity = {"open": "high", "mitigated": "low", "rejected": "info"}.get(status, "medium")
    return Risk.model_validate(
        {"source": source, "severity": severity, "description": f"{test.name}: {detail}"[:400], "status": status}
    )


def _reason(reply: str, name: str) -> str:
    for line in reply.splitlines():
        if name in line and "INVALID" in line:
            return line.split(name, 1)[-1].strip(" :—-")[:200] or "no reason given"
    return "no reason given"
