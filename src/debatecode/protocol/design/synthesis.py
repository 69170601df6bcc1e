"""After the rounds: escalation to a human, the synthesis into a decision record, and its review.

- **escalation**: when the gate reviewer escalates (a stalemate, max rounds
  without agreement, or a circular debate over a fundamental disagreement),
  a terminal user sees the positions and options A/B/C and picks one; the
  choice is journaled. Without a terminal nobody decides, and the record says
  so (its status is ``escalated``).
- **synthesis**: the moderator writes the recommendation, agreement, tensions,
  rejected alternatives, risks and open questions. What the debaters said is
  taken from their own speeches, not from the moderator's retelling: each
  perspective's key arguments, the dissents of those below the target, and
  the risks they raised. Confidence is measured, not asked for: HIGH on
  consensus, MEDIUM after a passed poll, a human's choice or a mean
  satisfaction of 70 or more, LOW otherwise.
- **synthesis review**: every debater reads how the record states its view;
  one that says it was misrepresented gets one correction round, in which its
  own corrected words replace the record's.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from debatecode.agents.agent import Agent
from debatecode.protocol.design.adr import slugify
from debatecode.protocol.design.records import (
    Confidence,
    DecisionRecord,
    Dissent,
    Escalation,
    EscalationOption,
    PerspectiveSummary,
    Position,
    Recommendation,
    RiskEntry,
)
from debatecode.protocol.design.replies import parse_review_answer, parse_speech
from debatecode.protocol.design.run import MODERATOR, DesignRun
from debatecode.protocol.design.sections import (
    bullets,
    dedupe_dissents,
    distinct,
    merge_patches,
    parse_alternatives,
    parse_patchlist,
    parse_risks,
    parse_sections,
    similar,
)
from debatecode.protocol.design.steps import DesignStep, last_decision
from debatecode.protocol.design.tally import question_options, recommended_option, tally_lines
from debatecode.protocol.state import TurnRecord
from debatecode.protocol.turns import gather_all

__all__ = ["EscalationStep", "SynthesisReviewStep", "SynthesisStep", "confidence_of"]

_MAX_RISKS = 8


def _final(run: DesignRun) -> dict[str, Position]:
    return run.state.latest()


class EscalationStep(DesignStep):
    """Put an unsettled debate to the human: positions and options A/B/C (journaled), or record that nobody chose."""

    name = "escalation"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        decision = last_decision(run)
        if decision is None or decision.action != "escalate":
            return "not needed"
        names = run.state.names()
        final = _final(run)
        scores = run.state.scores()
        ranked = sorted(
            final.values(), key=lambda p: (-(scores.get(p.perspective) or 0), list(names).index(p.perspective))
        )
        options: list[EscalationOption] = []
        seen: set[str] = set()
        for speech in ranked:
            stance = stance_of(run, speech)
            if stance and stance.lower() not in seen and len(options) < 2:
                seen.add(stance.lower())
                options.append(
                    EscalationOption(
                        label="AB"[len(options)], text=f"{names.get(speech.perspective, speech.perspective)}: {stance}"
                    )
                )
        options.append(
            EscalationOption(
                label="ABC"[len(options)],
                text="A hybrid: the moderator combines the positions and records every dissent",
            )
        )
        escalation = Escalation(
            reason=decision.reason,
            positions={
                names.get(k, k): (stance_of(run, p) or "(restated the question; no position)") for k, p in final.items()
            },
            options=options,
        )

        async def ask() -> TurnRecord:
            choice, guidance = None, None
            chooser = getattr(run.human, "choose", None)
            if chooser is not None:
                picked = await chooser(
                    f"Escalation: {decision.reason}",
                    "\n".join(f"- {name}: {stance}" for name, stance in escalation.positions.items()),
                    [(o.label, o.text) for o in options],
                )
                if picked is not None:
                    choice, guidance = picked
            return run.tool_turn(
                round_no=0,
                phase=self.name,
                agent_id="human",
                role="human",
                kind="choice",
                content=f"{choice}: {guidance or ''}".strip(": ") if choice else "no decision (non-interactive run)",
                metadata={"choice": choice, "guidance": guidance, "escalation": escalation.model_dump(mode="json")},
            )

        turn = await run.record(await run.journal.replay_or_do("r0/escalation/human/choice", ask))
        stored = Escalation.model_validate(turn.metadata["escalation"])
        choice = turn.metadata.get("choice")
        run.state.escalation = stored.model_copy(
            update={
                "choice": choice,
                "guidance": turn.metadata.get("guidance"),
                "decided_by": "human" if choice else "nobody",
            }
        )
        return f"chose {choice}" if choice else "no decision: recorded in the decision record"


def confidence_of(run: DesignRun) -> tuple[Confidence, str]:
    """How sure the decision is, from how the debate ended (not from the model's own claim)."""
    scores = run.state.scores()
    target = run.design.target_satisfaction
    decision = last_decision(run)
    reason = decision.reason if decision else run.state.stop_reason
    mean = sum(scores.values()) / len(scores) if scores else 0.0
    escalation = run.state.escalation
    if scores and all(s >= target for s in scores.values()):
        return "HIGH", f"every perspective reached {target} satisfaction ({reason})"
    if escalation is not None and escalation.choice:
        return "MEDIUM", f"the debate escalated ({escalation.reason}) and a human chose option {escalation.choice}"
    if escalation is not None:
        return "LOW", f"the debate escalated ({escalation.reason}) and nobody decided"
    if reason.startswith("convergence poll"):
        return "MEDIUM", f"{reason}; mean satisfaction {mean:.0f}"
    if mean >= 70:
        return "MEDIUM", f"{reason or 'the debate ended'}; mean satisfaction {mean:.0f}, below the target of {target}"
    return "LOW", f"{reason or 'the debate ended'}; mean satisfaction {mean:.0f}"


class SynthesisStep(DesignStep):
    """The moderator drafts the decision; the debaters' own words fill their sections."""

    name = "synthesis"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        names = run.state.names()
        final = _final(run)
        scores = run.state.scores()
        target = run.design.target_satisfaction
        last_summary = run.state.rounds[-1].summary if run.state.rounds else ""
        escalation = run.state.escalation
        chosen = next((o.text for o in escalation.options if o.label == escalation.choice), "") if escalation else ""
        draft = await run.say(
            run.moderator,
            "synthesise",
            phase=self.name,
            round_no=0,
            stage="synthesis",
            max_tokens=700,
            speeches=[
                {"name": names.get(k, k), "stance": p.stance or p.text[:200], "score": scores.get(k)}
                for k, p in final.items()
            ],
            summary=last_summary,
            stop_reason=run.state.stop_reason or "the debate ended",
            escalation=(
                f"option {escalation.choice}: {chosen}" + (f" ({escalation.guidance})" if escalation.guidance else "")
            )
            if escalation and escalation.choice
            else "",
        )
        await run.record(draft)
        sections = parse_sections(draft.content)
        confidence, why = confidence_of(run)
        recommendation_text = _recommendation(sections, run, chosen)
        caveats = bullets(sections.get("caveats", ""))
        dissents = _dissents(run, final, scores, target)
        if dissents:
            caveats.append("Dissents remain: " + "; ".join(", ".join(d.perspectives) for d in dissents))
        question = run.state.question
        shown: list[str] = [recommendation_text]
        agreement = _fresh(_agreement(run, final, bullets(sections.get("agreement", ""))), shown)
        tensions = _fresh(_clipped(bullets(sections.get("tensions", ""))), shown) or _tensions(run, final)
        rejected = []
        for alt in parse_alternatives(sections.get("rejected", "")):
            option = _clip(alt.option)
            if _fresh([option], shown):
                rejected.append(alt.model_copy(update={"option": option, "reason": _clip(alt.reason)}))
        open_questions = _fresh(_clipped(bullets(sections.get("open_questions", ""))), shown)
        risks = [r for r in _risks(run, sections, final) if _fresh([r.risk], shown)]
        record = DecisionRecord(
            number=0,
            slug=slugify(question.title),
            title=question.title,
            date=dt.date.today().isoformat(),
            debate_id=run.session_id,
            mode=run.state.mode,  # type: ignore[arg-type]
            status="escalated"
            if escalation is not None and not escalation.choice
            else "accepted"
            if confidence == "HIGH"
            else "proposed",
            question=question.text,
            context=_context(run),
            perspectives=[
                PerspectiveSummary(
                    name=names.get(key, key),
                    key_arguments=_key_arguments(run, key, final.get(key)),
                    trade_offs=run.state.perspectives[key].trade_offs,
                    final_satisfaction=scores.get(key),
                )
                for key in run.state.perspectives
            ],
            agreement=agreement,
            tensions=tensions,
            recommendation=Recommendation(
                text=recommendation_text, confidence=confidence, confidence_reason=why, caveats=caveats
            ),
            rejected=rejected,
            dissents=dissents,
            risks=risks,
            open_questions=open_questions,
            patches=_patches(run, final) if run.state.mode == "patchlist" else [],
            escalation=escalation,
            rounds=run.state.rounds_done,
            stop_reason=run.state.stop_reason,
            scores={names.get(k, k): v for k, v in scores.items()},
        )
        run.state.record = record
        return f"{confidence} confidence: {recommendation_text[:80]}"


def _context(run: DesignRun) -> str:
    parts = []
    if run.state.decision_text:
        parts.append(f"Decision to make: {run.state.decision_text}")
    analysis = run.state.analysis
    if analysis is not None:
        parts.append(
            f"Domain: {analysis.domain}; complexity: {analysis.complexity}; rounds planned: {analysis.rounds}."
        )
        if analysis.constraints:
            parts.append("Constraints: " + "; ".join(analysis.constraints) + ".")
    docs = run.state.question.context
    if docs:
        parts.append("Context files: " + ", ".join(d.path for d in docs) + ".")
    if run.state.guidance:
        parts.append("Human guidance: " + " / ".join(run.state.guidance))
    return "\n\n".join(parts)


def _recommendation(sections: dict[str, str], run: DesignRun, chosen: str) -> str:
    text = _clip(" ".join(bullets(sections.get("recommendation", ""))).strip(), 600)
    escalation = run.state.escalation
    if escalation is not None and not escalation.choice:
        # Nobody decided: the record must not read as if somebody had. It names the leading position instead.
        names = run.state.names()
        stances = {names.get(k, k): stance_of(run, p) for k, p in _final(run).items()}
        counted = tally_lines(question_options(run.state.question.text), stances)
        leading = f" The leading position: {counted[0]}" if counted and " recommend " in counted[0] else ""
        draft = f" The moderator's draft said: {text}" if text else ""
        return f"Undecided: {escalation.reason}; a human has to choose (see Escalation).{leading}{draft}"
    if text:
        return text
    if chosen:
        return chosen
    final = _final(run)
    scores = run.state.scores()
    if not final:
        return "No recommendation: no debater took a position."
    best = max(final.values(), key=lambda p: scores.get(p.perspective) or 0)
    name = run.state.names().get(best.perspective, best.perspective)
    return f"{best.stance or best.text[:200]} (the position of {name}, the most satisfied perspective; the moderator's draft gave none)"


_ITEM_CHARS = 280
"""Longest list item the record keeps of model text (small models run on)."""


def _clip(text: str, limit: int = _ITEM_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _clipped(lines: Sequence[str]) -> list[str]:
    return distinct([_clip(line) for line in lines if not _junk(line)])


def _junk(line: str) -> bool:
    """A placeholder or a fragment, not an item: "None", "No", "N/A", a single word."""
    words = line.split()
    return len(words) < 2 or line.strip(" .").lower() in ("none", "no", "n/a", "yes", "nothing", "none recorded")


def _fresh(lines: Sequence[str], shown: list[str]) -> list[str]:
    """``lines`` not already said in an earlier section (near-duplicates count); adds them to ``shown``."""
    kept = [line for line in lines if not _junk(line) and not any(similar(line, seen) for seen in shown)]
    shown.extend(kept)
    return kept


def _key_arguments(run: DesignRun, key: str, speech: Position | None) -> list[str]:
    if speech is None:
        return []
    parsed = parse_speech(speech.text, run.state.names(), own=key)
    question = run.state.question.text
    return _clipped([line for line in [parsed.stance, *parsed.reasons] if line and not _restates(line, question)])[:4]


def _agreement(run: DesignRun, final: dict[str, Position], drafted: list[str]) -> list[str]:
    """The count of who recommends which option (from the speeches), then the moderator's points that add something.

    A drafted point that merely repeats one debater's stance is left out: agreement is what several share.
    So is one arguing for a single option while the debaters are split between options.
    """
    names = run.state.names()
    stances = {names.get(k, k): stance_of(run, p) for k, p in final.items()}
    options = question_options(run.state.question.text)
    counted = tally_lines(options, stances)
    supported = {o for stance in stances.values() if stance and (o := recommended_option(stance, options)) is not None}
    own = [
        line
        for line in _clipped(drafted)
        if not any(similar(line, s) or (s and s[:60] in line) for s in stances.values())
        and _agrees_with_count(line, options, supported)
    ]
    return distinct([*counted, *own])


def _agrees_with_count(line: str, options: Sequence[str], supported: set[str]) -> bool:
    """An item arguing for one option is agreement only when that option is the only one any debater backs."""
    favoured = recommended_option(line, options) if options else None
    return favoured is None or supported == {favoured}


def stance_of(run: DesignRun, speech: Position) -> str:
    """The speech's stance, unless it only restates the question (small models do): then its first reason, if any."""
    parsed = parse_speech(speech.text, run.state.names(), own=speech.perspective)
    stance = parsed.stance or speech.text[:200]
    if _restates(stance, run.state.question.text):
        return next((r for r in parsed.reasons if not _restates(r, run.state.question.text)), "")
    return stance


def _restates(text: str, question: str) -> bool:
    """Mostly the question's own words, and most of them (a short stance picking one option does not count)."""
    words = {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}
    asked = {w for w in re.findall(r"[a-z0-9]+", question.lower()) if len(w) > 2}
    return bool(words and asked) and len(words & asked) / len(words | asked) >= 0.6


def _dissents(run: DesignRun, final: dict[str, Position], scores: dict[str, int], target: int) -> list[Dissent]:
    names = run.state.names()
    found = []
    for key, speech in final.items():
        score = scores.get(key)
        if score is not None and score >= target:
            continue
        parsed = parse_speech(speech.text, names, own=key)
        text = parsed.challenge_text or parsed.stance
        if text:
            found.append(Dissent(perspectives=[names.get(key, key)], text=text))
    return dedupe_dissents(found)


def _tensions(run: DesignRun, final: dict[str, Position]) -> list[str]:
    names = run.state.names()
    found = []
    for key, speech in final.items():
        for other in speech.challenges:
            found.append(f"{names.get(key, key)} challenges {names.get(other, other)}")
    return found


def _risks(run: DesignRun, sections: dict[str, str], final: dict[str, Position]) -> list[RiskEntry]:
    names = run.state.names()
    section = sections.get("risks", "")
    piped = [line for line in section.splitlines() if line.count("|") >= 2 and not set(line.strip()) <= set("|-: ")]
    risks = [r for r in (_piped_risk(line) for line in piped) if r is not None]
    rest = "\n".join(line for line in section.splitlines() if line not in piped)
    risks.extend(parse_risks(rest, default_owner="Moderator"))
    seen = {r.risk.lower() for r in risks}
    spoken = [*run.state.positions, *(p for r in run.state.rounds for p in [*r.arguments, *r.rebuttals])]
    for speech in spoken:
        key = speech.perspective
        for raised in speech.risks:
            if raised.lower() not in seen:
                seen.add(raised.lower())
                risks.append(RiskEntry(risk=raised, owner=names.get(key, key)))
    question = run.state.question.text
    clipped = [
        r.model_copy(update={"risk": _clip(r.risk, 220), "mitigation": _clip(r.mitigation, 220)})
        for r in risks
        if not _junk(r.risk) and not _restates(r.risk, question)
    ]
    kept: list[RiskEntry] = []
    for entry in clipped:
        if not any(similar(entry.risk, other.risk) for other in kept):
            kept.append(entry)
    return kept[:_MAX_RISKS]


def _piped_risk(line: str) -> RiskEntry | None:
    """``risk | likelihood | impact | mitigation`` (a bullet or a table row, as the synthesis prompt asks)."""
    cells = [c.strip() for c in line.strip().lstrip("-*+ ").strip("|").split("|")]
    if not cells or not cells[0] or cells[0].lower() == "risk":
        return None

    def level(index: int) -> str:
        word = cells[index].lower() if len(cells) > index else ""
        return next((lv for lv in ("low", "medium", "high") if lv in word), "medium")

    return RiskEntry(
        risk=cells[0],
        likelihood=level(1),  # type: ignore[arg-type]
        impact=level(2),  # type: ignore[arg-type]
        mitigation=cells[3] if len(cells) > 3 else "",
        owner="Moderator",
    )


def _patches(run: DesignRun, final: dict[str, Position]) -> Any:
    names = run.state.names()
    return merge_patches([parse_patchlist(p.text, names.get(k, k)) for k, p in final.items()])


class SynthesisReviewStep(DesignStep):
    """Every debater checks how the record states its view; a misrepresented one gets one correction round."""

    name = "synthesis_review"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        record = run.state.record
        if record is None:
            return "no record to review"
        names = run.state.names()
        debaters = run.debaters()

        async def review(agent: Agent) -> TurnRecord:
            return await run.say(
                agent,
                "review",
                phase=self.name,
                round_no=0,
                stage="synthesis",
                max_tokens=120,
                represented=_represented(record, names[agent.id]),
            )

        turns = await gather_all(*(review(agent) for agent in debaters))
        corrections: list[tuple[str, str]] = []
        for agent, turn in zip(debaters, turns, strict=True):
            await run.record(turn)
            accurate, corrected = parse_review_answer(turn.content)
            if not accurate and corrected:
                corrections.append((names[agent.id], corrected))
        if not corrections:
            return "every perspective accepts how it is represented"
        turn = await run.record(
            run.tool_turn(
                round_no=0,
                phase="correction",
                agent_id=MODERATOR,
                role="moderator",
                kind="apply",
                content="\n".join(f"{name}: {text}" for name, text in corrections),
                metadata={"corrections": [list(c) for c in corrections]},
            )
        )
        run.state.record = apply_corrections(record, [(str(a), str(b)) for a, b in turn.metadata["corrections"]])
        return f"one correction round: {', '.join(name for name, _ in corrections)}"


def _represented(record: DecisionRecord, name: str) -> str:
    lines = []
    summary = next((p for p in record.perspectives if p.name == name), None)
    if summary is not None and summary.key_arguments:
        lines.append("Key arguments: " + "; ".join(summary.key_arguments))
    for dissent in record.dissents:
        if name in dissent.perspectives:
            lines.append("Dissent: " + dissent.text)
    return "\n".join(lines) or "(nothing: the record does not mention your view)"


def apply_corrections(record: DecisionRecord, corrections: Sequence[tuple[str, str]]) -> DecisionRecord:
    """``record`` with each named perspective's corrected view replacing its dissent (or added as one)."""
    dissents = list(record.dissents)
    notes = list(record.corrections)
    for name, text in corrections:
        dissents = [
            d.model_copy(update={"perspectives": [p for p in d.perspectives if p != name]})
            for d in dissents
            if d.perspectives != [name]
        ]
        dissents.append(Dissent(perspectives=[name], text=text))
        notes.append(f"{name} said its view was misrepresented; its own correction replaces it: {text}")
    return record.model_copy(update={"dissents": dedupe_dissents(dissents), "corrections": notes})
