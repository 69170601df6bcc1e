"""Escalation: a debate the debaters could not settle, put to a person with one option per real alternative.

The options are the *opposing positions*, not the most satisfied debaters:
the final stances are grouped by what they recommend
(``alternatives.group_stances``), and every group gets one option, A, B, ...,
most held first. The last option is always "continue with guidance": none of
the positions as it stands, the moderator combines them as the person
directs. The person's choice is journaled (``r0/escalation/human/choice``,
its metadata holding the whole ``Escalation``), so a resumed or replayed
debate asks nobody twice, and a server can show it (``escalation_from_turns``).
Without a person nobody decides, and the record says so.

The step itself announces the escalation on the session's bus, whoever runs
the debate (the terminal, the Python API or the server): ``Escalated`` with
the options and the positions when it asks, then ``EscalationDecided`` with
the answer (``decided_by`` ``nobody`` when nobody chose). Both are emitted
once per question actually asked: a resume that replays the journaled choice
announces nothing again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from string import ascii_uppercase

from debatecode.protocol.design.alternatives import Alternative, group_stances
from debatecode.protocol.design.records import Escalation, EscalationOption
from debatecode.protocol.design.run import DesignRun
from debatecode.protocol.design.stances import active_final, stance_of
from debatecode.protocol.design.steps import DesignStep, last_decision
from debatecode.protocol.events import Escalated, EscalationDecided
from debatecode.protocol.state import TurnRecord

__all__ = [
    "ESCALATION_KEY",
    "GUIDANCE_OPTION",
    "EscalationStep",
    "chosen_option",
    "escalation_from_turns",
    "escalation_options",
]

ESCALATION_KEY = "r0/escalation/human/choice"
"""The journal key of the person's choice (or of the record that nobody chose)."""

GUIDANCE_OPTION = (
    "Continue with guidance: none of these as it stands; the moderator combines the positions as you direct "
    "and records every dissent"
)


def escalation_options(alternatives: Sequence[Alternative], names: dict[str, str]) -> list[EscalationOption]:
    """One option per alternative (A, B, ... in the given order), then the "continue with guidance" option.

    ``names`` maps the holders' keys to display names (unknown keys are shown as they are).
    """
    options = []
    for letter, alternative in zip(ascii_uppercase, alternatives, strict=False):
        holders = [names.get(key, key) for key in alternative.holders]
        options.append(
            EscalationOption(
                label=letter,
                text=f"{', '.join(holders)}: {alternative.stance}",
                kind="position",
                stance=alternative.stance,
                holders=holders,
            )
        )
    label = ascii_uppercase[min(len(options), len(ascii_uppercase) - 1)]
    options.append(EscalationOption(label=label, text=GUIDANCE_OPTION, kind="guidance"))
    return options


def chosen_option(escalation: Escalation | None) -> EscalationOption | None:
    """The option the person chose, or None when nobody chose."""
    if escalation is None or not escalation.choice:
        return None
    return next((o for o in escalation.options if o.label == escalation.choice), None)


def escalation_from_turns(turns: Iterable[TurnRecord]) -> Escalation | None:
    """The escalation of a stored design debate, with the choice made (None when it never escalated).

    Reads the journaled choice turn only, so it works on a finished, a paused or a replayed debate alike.
    """
    turn = next((t for t in turns if t.key == ESCALATION_KEY), None)
    if turn is None or "escalation" not in turn.metadata:
        return None
    return _decided(Escalation.model_validate(turn.metadata["escalation"]), turn)


def _decided(escalation: Escalation, turn: TurnRecord) -> Escalation:
    choice = turn.metadata.get("choice")
    return escalation.model_copy(
        update={
            "choice": choice,
            "guidance": turn.metadata.get("guidance"),
            "decided_by": "human" if choice else "nobody",
        }
    )


class EscalationStep(DesignStep):
    """Put an unsettled debate to the human: the positions and one option per alternative (journaled)."""

    name = "escalation"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        decision = last_decision(run)
        if decision is None or decision.action != "escalate":
            return "not needed"
        names = run.state.names()
        final = active_final(run)
        stances = {key: stance_of(run, speech) for key, speech in final.items()}
        alternatives = group_stances(stances, question=run.state.question.text, scores=run.state.scores())
        options = escalation_options(alternatives, names)
        escalation = Escalation(
            reason=decision.reason,
            positions={
                names.get(k, k): (stance or "(restated the question; no position)") for k, stance in stances.items()
            },
            options=options,
        )

        async def ask() -> TurnRecord:
            choice, guidance = None, None
            chooser = getattr(run.human, "choose", None)
            summary = "\n".join(f"- {name}: {stance}" for name, stance in escalation.positions.items())
            run.announce(
                Escalated(
                    run.session_id,
                    decision.reason,
                    summary,
                    options=[{"label": o.label, "text": o.text} for o in options],
                    positions=dict(escalation.positions),
                    awaiting=chooser is not None,
                )
            )
            if chooser is not None:
                picked = await chooser(f"Escalation: {decision.reason}", summary, [(o.label, o.text) for o in options])
                if picked is not None:
                    choice, guidance = picked
            _announce_decision(run, options, choice, guidance)
            return run.tool_turn(
                round_no=0,
                phase=self.name,
                agent_id="human",
                role="human",
                kind="choice",
                content=f"{choice}: {guidance or ''}".strip(": ") if choice else "no decision (non-interactive run)",
                metadata={"choice": choice, "guidance": guidance, "escalation": escalation.model_dump(mode="json")},
            )

        turn = await run.record(await run.journal.replay_or_do(ESCALATION_KEY, ask))
        run.state.escalation = _decided(Escalation.model_validate(turn.metadata["escalation"]), turn)
        choice = run.state.escalation.choice
        return f"chose {choice}" if choice else "no decision: recorded in the decision record"


def _announce_decision(
    run: DesignRun, options: Sequence[EscalationOption], choice: str | None, guidance: str | None
) -> None:
    """``EscalationDecided``: the option chosen with its text and guidance, or that nobody chose."""
    if choice is None:
        run.announce(EscalationDecided(run.session_id, None, decided_by="nobody"))
        return
    text = next((o.text for o in options if o.label == choice), "")
    run.announce(EscalationDecided(run.session_id, choice, text, guidance))
