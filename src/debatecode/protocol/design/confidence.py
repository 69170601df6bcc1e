"""How sure a design decision is: measured from how the debate ended, never asked of a model.

- ``HUMAN``: a person chose an option at an escalation; the choice is the
  decision, and nothing was measured.
- ``HIGH``: every (unmuted) perspective reached the target satisfaction.
- ``MEDIUM``: a convergence poll passed, or the mean satisfaction is 70 or more.
- ``LOW``: anything else, an escalation nobody decided included.

``settled_confidence`` keeps a record honest afterwards: a HIGH with a
recorded dissent or a correction drops to MEDIUM and says why.
"""

from __future__ import annotations

from debatecode.protocol.design.gate import muted_perspectives
from debatecode.protocol.design.records import Confidence, DecisionRecord
from debatecode.protocol.design.run import DesignRun
from debatecode.protocol.design.steps import last_decision

__all__ = ["confidence_of", "scores_of", "settled_confidence"]


def scores_of(run: DesignRun) -> dict[str, int]:
    """Each perspective's latest satisfaction, without muted perspectives (their stale score decides nothing)."""
    muted = muted_perspectives(run.state.rounds)
    return {key: score for key, score in run.state.scores().items() if key not in muted}


def confidence_of(run: DesignRun) -> tuple[Confidence, str]:
    """How sure the decision is, from how the debate ended (not from the model's own claim).

    A person's choice at an escalation is ``HUMAN``: the decision was made, not measured.
    """
    scores = scores_of(run)
    target = run.design.target_satisfaction
    decision = last_decision(run)
    reason = decision.reason if decision else run.state.stop_reason
    mean = sum(scores.values()) / len(scores) if scores else 0.0
    escalation = run.state.escalation
    if escalation is not None and escalation.choice:
        return "HUMAN", (
            f"decided by a person at the escalation (option {escalation.choice}), not measured from the debate, "
            f"which did not settle it: {escalation.reason}"
        )
    if scores and all(s >= target for s in scores.values()):
        return "HIGH", f"every perspective reached {target} satisfaction ({reason})"
    if escalation is not None:
        return "LOW", f"the debate escalated ({escalation.reason}) and nobody decided"
    if reason.startswith("convergence poll"):
        return "MEDIUM", f"{reason}; mean satisfaction {mean:.0f}"
    if mean >= 70:
        return "MEDIUM", f"{reason or 'the debate ended'}; mean satisfaction {mean:.0f}, below the target of {target}"
    return "LOW", f"{reason or 'the debate ended'}; mean satisfaction {mean:.0f}"


def settled_confidence(record: DecisionRecord) -> DecisionRecord:
    """``record`` with a HIGH confidence lowered to MEDIUM, and said why, when a dissent or correction stands.

    HIGH says every perspective is satisfied; a recorded dissent, or a perspective that had to correct how the
    record stated its view, says otherwise. An accepted record becomes proposed with it.
    """
    rec = record.recommendation
    if rec.confidence != "HIGH" or not (record.dissents or record.corrections):
        return record
    why = []
    if record.corrections:
        corrected = [c.split(" said its view", 1)[0] for c in record.corrections]
        why.append(f"{', '.join(corrected)} corrected how the record stated its view in the correction round")
    holders = list(dict.fromkeys(name for d in record.dissents for name in d.perspectives))
    if holders:
        why.append(f"a dissent stands ({', '.join(holders)})")
    reason = f"{rec.confidence_reason}; lowered from HIGH because {' and '.join(why)}"
    lowered = rec.model_copy(update={"confidence": "MEDIUM", "confidence_reason": reason})
    status = "proposed" if record.status == "accepted" else record.status
    return record.model_copy(update={"recommendation": lowered, "status": status})
