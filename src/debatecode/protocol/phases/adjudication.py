"""Adjudication: the debate spends its tokens where the candidates disagree on concrete inputs.

After the drafts (and their refinements from visible failures), every author's
candidate runs on the task's generated inputs in one journaled tool turn
(``protocol/behaviour.py``). When the top test tier holds more than one
behaviour, the inputs on which its largest behaviour clusters differ are put to
the debaters, at most ``adjudication.max_questions`` of them. Each debater
answers *apart*, without seeing the code or the others' answers: what must the
function return for this input, according to the specification, with one line
of reasoning: a Python literal, or ``raises <ExceptionName>`` when the specification
says the call must raise. A strict majority of the readable answers becomes an adjudicated
test (suite ``adjudicated``, ranked below the task's visible examples and above
the agents' exchanged tests). Every candidate is re-run; each author whose
candidate fails an adjudicated or visible test refines it once from the actual
failures, and the refinement is kept only if it passes no fewer tests.

Every question, answer and decision is a journaled turn, so resume and audit
keep working. Nothing runs when the candidates already agree, or after an early stop; with
``adjudication.when = "passing"``, nothing runs either while no candidate passes every visible test.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections import Counter
from collections.abc import Sequence

from debatecode.agents.agent import Agent
from debatecode.agents.prompts import Prompt
from debatecode.execution.generated import RAISES, AdjudicatedTest
from debatecode.execution.probes import parse_calls
from debatecode.execution.ranking import Ranked
from debatecode.protocol.behaviour import normalised_code, rank_by_behaviour
from debatecode.protocol.phases.base import Phase
from debatecode.protocol.run import DebateRun, gather_all
from debatecode.protocol.settings import AdjudicationSettings
from debatecode.protocol.state import Candidate

__all__ = ["AdjudicationPhase", "disputed_inputs", "majority_answer", "read_answer"]

_SHOWN_CODES = 3
"""Different leading codes shown to the Red team at most."""

_ANSWER = re.compile(r"^\s*\**\s*answer\s*\**\s*[:=]\s*\**\s*(?P<value>.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_RAISES = re.compile(
    r"^(?:it\s+)?(?:must\s+|should\s+|will\s+)?(?:raises?|throws?)\s+(?:an?\s+)?`?(?:\w+\.)*(?P<name>[A-Za-z_]\w*)`?",
    re.IGNORECASE,
)
_EXCEPTION_LINE = re.compile(r"^(?:\w+\.)*(?P<name>[A-Za-z_]\w*(?:Error|Exception))\b")


def read_answer(reply: str, style: str) -> str | None:
    """The answer in ``reply``: a canonical Python literal (``repr`` of its value), ``raises <Name>`` for an
    exception the call must raise, or None when unreadable.

    Chat replies end with ``ANSWER: <literal>`` or ``ANSWER: raises ValueError``; completion replies continue a
    doctest, so their first non-empty line is the output, or a ``Traceback`` whose exception line names it.
    """
    if style == "completion":
        lines = [line.strip() for line in reply.splitlines() if line.strip()]
        text = lines[0] if lines else ""
        if text.startswith("Traceback"):
            named = [m.group("name") for line in lines[1:] if (m := _EXCEPTION_LINE.match(line))]
            return f"{RAISES}{named[0]}" if named else None
    else:
        found = list(_ANSWER.finditer(reply))
        text = found[-1].group("value") if found else ""
    text = text.strip().strip("`").strip()
    if not text:
        return None
    raised = _RAISES.match(text) or _EXCEPTION_LINE.fullmatch(text.rstrip(":."))
    if raised and _is_exception_name(raised.group("name")):
        return f"{RAISES}{raised.group('name')}"
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return repr(value)


def _is_exception_name(name: str) -> bool:
    """A builtin exception's name, or one that reads as an exception class (``...Error``, ``...Exception``)."""
    builtin = getattr(builtins, name, None)
    return (isinstance(builtin, type) and issubclass(builtin, BaseException)) or name.endswith(("Error", "Exception"))


def majority_answer(answers: Sequence[str | None]) -> tuple[str, int, int] | None:
    """The answer a strict majority of the readable ``answers`` gave: (answer, its votes, readable answers)."""
    readable = [a for a in answers if a is not None]
    if len(readable) < 2:
        return None
    answer, votes = Counter(readable).most_common(1)[0]
    if votes * 2 <= len(readable):
        return None
    return answer, votes, len(readable)


def disputed_inputs(rows: Sequence[Ranked], inputs: Sequence[str], limit: int) -> list[str]:
    """Inputs on which the largest behaviour clusters of the top test tier differ, most contested first.

    An input counts when the two largest clusters (by size, then rank) return different values
    there, or one of them fails; inputs where more distinct values appear in the tier come first.
    """
    if not rows:
        return []
    top = [r for r in rows if r.evidence.tests == rows[0].evidence.tests and r.evidence.behaviour]
    clusters: dict[tuple[str | None, ...], int] = {}
    for row in top:
        clusters[row.evidence.behaviour] = clusters.get(row.evidence.behaviour, 0) + 1
    if len(clusters) < 2:
        return []
    order = {behaviour: index for index, behaviour in enumerate(dict.fromkeys(r.evidence.behaviour for r in top))}
    first, second = sorted(clusters, key=lambda b: (-clusters[b], order[b]))[:2]
    differing = [
        (index, call)
        for index, call in enumerate(inputs)
        if index < len(first) and (first[index] != second[index] or first[index] is None)
    ]
    spread = {index: len({r.evidence.behaviour[index] for r in top}) for index, _ in differing}
    differing.sort(key=lambda item: (-spread[item[0]], item[0]))
    return [call for _, call in differing[:limit]]


class AdjudicationPhase(Phase):
    name = "adjudication"

    def __init__(self, settings: AdjudicationSettings | None = None) -> None:
        self.settings = settings or AdjudicationSettings()

    async def execute(self, run: DebateRun, round_no: int) -> str:
        if run.state.stop_reason.startswith("early stop"):
            return "skipped: the candidates already pass and agree (early stop)"
        settings = self.settings
        authors = run.authors()
        candidates = [c for c in run.ranking() if c.agent_id in {a.id for a in authors}]
        if len(candidates) < 2:
            return "fewer than two candidates with code: nothing to adjudicate"
        if settings.when == "passing" and not candidates[0].all_visible_pass():
            return "skipped: no candidate passes every visible test (adjudication.when = passing)"
        ranked = await rank_by_behaviour(run, candidates, phase=self.name, kind="behaviour", limit=settings.inputs)
        red_calls = await self._distinguishing_inputs(run, candidates, settings.red_inputs)
        if red_calls:
            ranked = await rank_by_behaviour(
                run, candidates, phase=self.name, kind="behaviour-red", limit=settings.inputs, extra=red_calls
            )
        if ranked is None:
            return "no input could be generated from the task: nothing to adjudicate"
        questions = disputed_inputs(ranked.rows, ranked.inputs, settings.max_questions)
        found = f" ({len(red_calls)} from the Red team)" if red_calls else ""
        if not questions:
            return f"the leading candidates agree on all {len(ranked.inputs)} inputs{found}"
        tests = await self._adjudicate(run, authors, questions)
        if tests:
            run.state.adjudicated.extend(tests)
            await run.refresh()
        refined = await self._refine(run, authors, settings.refinements)
        decided = ", ".join(f"{t.call} -> {t.expected} ({t.votes}/{t.answers})" for t in tests) or "no majority"
        return f"{len(questions)} disputed inputs put to {len(authors)} debaters: {decided}; {refined} refinements"

    async def _distinguishing_inputs(self, run: DebateRun, candidates: list[Candidate], count: int) -> list[str]:
        """The Red team's calls that might tell apart the different codes sharing the best test score."""
        red = run.first_with_role("red")
        if red is None or count == 0:
            return []
        best = candidates[0].score()
        codes = list(dict.fromkeys(normalised_code(c.code or "") for c in candidates if c.score() == best and c.code))[
            :_SHOWN_CODES
        ]
        if len(codes) < 2:
            return []
        prompt = red.prompt("distinguish", run.task, codes=codes, count=count, **run.context())
        turn = await run.ask(red, prompt, phase=self.name, round_no=0, kind="distinguish")
        calls = parse_calls(prompt.full_reply(turn.content), run.task.entry_point, count)
        await run.record(turn.model_copy(update={"metadata": {**turn.metadata, "calls": calls}}))
        return calls

    async def _adjudicate(self, run: DebateRun, authors: list[Agent], questions: list[str]) -> list[AdjudicatedTest]:
        start = len(run.state.adjudicated)
        tests: list[AdjudicatedTest] = []
        for index, call in enumerate(questions, start=1):
            answers = await gather_all(*(self._ask(run, agent, call, index) for agent in authors))
            decided = majority_answer(answers)
            if decided is not None:
                answer, votes, readable = decided
                tests.append(
                    AdjudicatedTest(f"test_adjudicated_{start + len(tests) + 1}", call, answer, votes, readable)
                )
        return tests

    async def _ask(self, run: DebateRun, agent: Agent, call: str, index: int) -> str | None:
        prompt: Prompt = agent.prompt("adjudicate", run.task, len(run.authors()), call=call, **run.context(agent.id))
        turn = await run.ask(agent, prompt, phase=self.name, round_no=0, kind=f"adjudicate-{index}")
        answer = read_answer(turn.content, prompt.style)
        await run.record(turn.model_copy(update={"metadata": {**turn.metadata, "call": call, "answer": answer}}))
        return answer

    async def _refine(self, run: DebateRun, authors: list[Agent], limit: int) -> int:
        counts = await gather_all(*(self._refine_one(run, agent, limit) for agent in authors))
        return sum(counts)

    async def _refine_one(self, run: DebateRun, agent: Agent, limit: int) -> int:
        refinements = 0
        for attempt in range(1, limit + 1):
            current = run.state.candidates.get(agent.id)
            if current is None or current.code is None or not _fails_a_settled_test(current):
                break
            report = current.report.model_copy(
                update={"cases": [c for c in current.report.cases if c.suite in ("visible", "adjudicated")]}
            )
            prompt = agent.prompt(
                "refine", run.task, len(run.authors()), code=current.code, report=report, **run.context(agent.id)
            )
            turn = await run.ask(
                agent, prompt, phase=self.name, round_no=0, kind=f"refine-adjudicated-{attempt}", want_code=True
            )
            run.state.adopt(await run.evaluate(agent, turn))
            refinements += 1
        return refinements


def _fails_a_settled_test(candidate: Candidate) -> bool:
    return any(c.outcome != "passed" for c in candidate.report.cases if c.suite in ("visible", "adjudicated"))
