"""After the rounds: escalation to a human, the synthesis into a decision record, and its review.

- **escalation** (``escalation.py``): when the gate reviewer escalates, a
  person sees one option per opposing position, plus "continue with
  guidance", and picks one; the choice is journaled. Without a person nobody
  decides, and the record says so (its status is ``escalated``).
- **synthesis**: the moderator writes the recommendation, agreement, tensions,
  rejected alternatives, risks, implementation notes and responsibilities.
  What the debaters said is taken from their own speeches, not from the
  moderator's retelling (``record_parts.py``): each perspective's key
  arguments, responsibilities and interfaces, the dissents attributed to
  whoever holds them, the risks they raised, the round-by-round summary and
  who did not take part. When a person chose at an escalation, that choice
  *is* the decision: the recommendation states the chosen option, the
  confidence says a person decided, and the moderator's draft is kept as
  context only. Otherwise confidence is measured, not asked for: HIGH on
  consensus, MEDIUM after a passed poll or a mean satisfaction of 70 or
  more, LOW otherwise; and a HIGH with a recorded dissent or a correction
  drops to MEDIUM, saying why.
- **synthesis review**: every debater reads how the record states its view;
  one that says it was misrepresented gets one correction round, in which its
  own corrected words replace the record's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from debatecode.protocol.design.adr import slugify
from debatecode.protocol.design.confidence import confidence_of, scores_of, settled_confidence
from debatecode.protocol.design.escalation import EscalationStep, chosen_option
from debatecode.protocol.design.record_parts import (
    attributed_dissents,
    implementation_notes,
    participation,
    responsibilities,
    round_summaries,
)
from debatecode.protocol.design.records import (
    DecisionRecord,
    PerspectiveSummary,
    Position,
    Recommendation,
    RiskEntry,
)
from debatecode.protocol.design.replies import parse_speech
from debatecode.protocol.design.run import DesignRun
from debatecode.protocol.design.sections import (
    bullets,
    distinct,
    merge_patches,
    parse_alternatives,
    parse_patchlist,
    parse_risks,
    parse_sections,
    similar,
)
from debatecode.protocol.design.stances import active_final, restates, stance_of
from debatecode.protocol.design.steps import DesignStep
from debatecode.protocol.design.synthesis_review import SynthesisReviewStep, apply_corrections
from debatecode.protocol.design.tally import question_options, recommended_option, tally_lines

__all__ = [
    "EscalationStep",
    "SynthesisReviewStep",
    "SynthesisStep",
    "apply_corrections",
    "confidence_of",
    "settled_confidence",
    "stance_of",
]

_MAX_RISKS = 8


def _final(run: DesignRun) -> dict[str, Position]:
    return active_final(run)


class SynthesisStep(DesignStep):
    """The moderator drafts the decision; the debaters' own words fill their sections."""

    name = "synthesis"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        names = run.state.names()
        final = _final(run)
        scores = scores_of(run)
        target = run.design.target_satisfaction
        last_summary = run.state.rounds[-1].summary if run.state.rounds else ""
        escalation = run.state.escalation
        picked = chosen_option(escalation)
        chosen = picked.text if picked is not None else ""
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
        drafted = _drafted(sections)
        recommendation_text = _recommendation(sections, run, chosen)
        caveats = bullets(sections.get("caveats", ""))
        dissents = attributed_dissents(run, final, scores, target)
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
            if confidence in ("HIGH", "HUMAN")
            else "proposed",
            question=question.text,
            context=_context(run),
            perspectives=[_summary(run, key, final, scores, sections) for key in run.state.perspectives],
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
            continued=list(run.state.continued),
            rounds=run.state.rounds_done,
            stop_reason=run.state.stop_reason,
            scores={names.get(k, k): v for k, v in scores.items()},
            round_summaries=round_summaries(run),
            implementation_notes=implementation_notes(run, sections, final, recommendation_text),
            moderator_draft=drafted if picked is not None else "",
            participation=participation(run),
        )
        run.state.record = settled_confidence(record)
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


def _drafted(sections: dict[str, str]) -> str:
    """The moderator's recommendation, as it wrote it (clipped)."""
    return _clip(" ".join(bullets(sections.get("recommendation", ""))).strip(), 600)


def _decided(run: DesignRun) -> str | None:
    """The recommendation a person's choice at the escalation makes (None when nobody chose)."""
    escalation = run.state.escalation
    option = chosen_option(escalation)
    if escalation is None or option is None:
        return None
    added = f" The person added: {escalation.guidance}" if escalation.guidance else ""
    if option.kind == "position":
        held = f" (the position of {', '.join(option.holders)})" if option.holders else ""
        return (
            f"Option {option.label}, chosen by a person at the escalation: {option.stance or option.text}{held}.{added}"
        )
    direction = escalation.guidance or "no direction given"
    return (
        f"Option {option.label}, chosen by a person at the escalation: none of the positions as it stands; "
        f"combine them as the person directed: {direction}. The moderator's combination is kept below as context."
    )


def _summary(
    run: DesignRun, key: str, final: dict[str, Position], scores: dict[str, int], sections: dict[str, str]
) -> PerspectiveSummary:
    spoken = [p for p in [*run.state.positions, *(s for r in run.state.rounds for s in [*r.arguments, *r.rebuttals])]]
    owns, interfaces = responsibilities(run, key, sections, [p for p in spoken if p.perspective == key])
    return PerspectiveSummary(
        name=run.state.names().get(key, key),
        key_arguments=_key_arguments(run, key, final.get(key)),
        trade_offs=run.state.perspectives[key].trade_offs,
        final_satisfaction=scores.get(key),
        responsibilities=owns,
        interfaces=interfaces,
    )


def _recommendation(sections: dict[str, str], run: DesignRun, chosen: str) -> str:
    decided = _decided(run)
    if decided is not None:
        return decided
    text = _drafted(sections)
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
    if run.state.mode == "patchlist":
        return _patchlist_recommendation(run)
    final = _final(run)
    scores = scores_of(run)
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
    return _clipped([line for line in [parsed.stance, *parsed.reasons] if line and not restates(line, question)])[:4]


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
        if not _junk(r.risk) and not restates(r.risk, question)
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


def _patchlist_recommendation(run: DesignRun) -> str:
    """A patchlist's recommendation when the moderator wrote none: what to apply, by severity."""
    patches = _patches(run, _final(run))
    by = {sev: [p.id for p in patches if p.severity == sev] for sev in ("BLOCKING", "HIGH", "MEDIUM-LOW")}
    if not by["BLOCKING"] and not by["HIGH"]:
        optional = f" ({len(by['MEDIUM-LOW'])} MEDIUM/LOW items are optional)" if by["MEDIUM-LOW"] else ""
        return f"Go ahead: no reviewer raised a BLOCKING or HIGH item{optional}."
    parts = []
    if by["BLOCKING"]:
        parts.append(f"apply the BLOCKING changes ({', '.join(by['BLOCKING'])}) before going ahead")
    if by["HIGH"]:
        parts.append(f"then the HIGH ones ({', '.join(by['HIGH'])})")
    if by["MEDIUM-LOW"]:
        parts.append(f"the MEDIUM/LOW items ({', '.join(by['MEDIUM-LOW'])}) are optional")
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."
