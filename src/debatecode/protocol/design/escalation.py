"""Escalation: a debate the debaters could not settle, put to a person with one option per real alternative.

The options are the *opposing positions*, not the most satisfied debaters:
the final stances are grouped by what they recommend
(``alternatives.group_stances``), and every group gets one option, A, B, ...,
most held first. The last option is "continue with guidance": none of the
positions as it stands; the debate runs one more response round with the
person's guidance in every debater's prompt, then the gate reviewer decides
again (synthesis, or another escalation). A debate may continue so at most
``MAX_GUIDED_ROUNDS`` times, one round per escalation; an escalation past
that offers "combine with guidance" instead: no more rounds, the moderator
combines the positions as the person directs.

The person's choice is journaled (``r0/escalation/human/choice`` for the
first escalation, ``r<N>/escalation/human/choice`` for one after guided round
N, its metadata holding the whole ``Escalation``), so a resumed or replayed
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

import asyncio
from collections.abc import Iterable, Sequence
from string import ascii_uppercase

from debatecode.protocol.design.alternatives import Alternative, group_stances
from debatecode.protocol.design.records import Escalation, EscalationOption
from debatecode.protocol.design.run import DesignRun
from debatecode.protocol.design.stances import active_final, stance_of
from debatecode.protocol.design.steps import DesignStep, last_decision
from debatecode.protocol.events import Escalated, EscalationDecided
from debatecode.protocol.journal import turn_key
from debatecode.store.records import TurnRecord

__all__ = [
    "COMBINE_OPTION",
    "ESCALATION_KEY",
    "GUIDANCE_OPTION",
    "MAX_GUIDED_ROUNDS",
    "EscalationStep",
    "chosen_option",
    "escalation_from_turns",
    "escalation_options",
]

ESCALATION_KEY = "r0/escalation/human/choice"
"""The journal key of the person's choice at the first escalation (or of the record that nobody chose)."""

MAX_GUIDED_ROUNDS = 2
"""Rounds a debate may run on a person's guidance at its escalations, one per escalation.

So a debate runs at most ``design.max_rounds + MAX_GUIDED_ROUNDS`` response rounds, and cannot loop forever."""

GUIDANCE_OPTION = (
    "Continue with guidance: none of these as it stands; the debate runs one more round with your guidance "
    "in every debater's prompt, then decides again"
)

COMBINE_OPTION = (
    "Combine with guidance: none of these as it stands; no more rounds are allowed, so the moderator combines "
    "the positions as you direct and records every dissent"
)

NO_GUIDANCE = (
    "None of the positions was chosen as it stands: look for one the others can accept, and say what it costs."
)
"""What the debaters are told when the person continued the debate without writing any guidance."""


def escalation_options(
    alternatives: Sequence[Alternative], names: dict[str, str], *, can_continue: bool = True
) -> list[EscalationOption]:
    """One option per alternative (A, B, ... in the given order), then the "continue with guidance" option.

    ``names`` maps the holders' keys to display names (unknown keys are shown as they are). Without
    ``can_continue`` (no guided round left) the last option is "combine with guidance" instead.
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
    options.append(
        EscalationOption(label=label, text=GUIDANCE_OPTION if can_continue else COMBINE_OPTION, kind="guidance")
    )
    return options


def chosen_option(escalation: Escalation | None) -> EscalationOption | None:
    """The option the person chose, or None when nobody chose."""
    if escalation is None or not escalation.choice:
        return None
    return next((o for o in escalation.options if o.label == escalation.choice), None)


def escalation_from_turns(turns: Iterable[TurnRecord]) -> Escalation | None:
    """The latest escalation of a stored design debate, with the choice made (None when it never escalated).

    Reads the journaled choice turns only, so it works on a finished, a paused or a replayed debate alike.
    """
    asked = [t for t in turns if _is_choice(t) and "escalation" in t.metadata]
    if not asked:
        return None
    turn = max(asked, key=lambda t: t.seq)
    return _decided(Escalation.model_validate(turn.metadata["escalation"]), turn)


def _is_choice(turn: TurnRecord) -> bool:
    return turn.key == ESCALATION_KEY or (turn.key.startswith("r") and turn.key.endswith("/escalation/human/choice"))


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
    """Put an unsettled debate to the human: the positions and one option per alternative (journaled).

    Choosing "continue with guidance" while guided rounds are left sets up the next round
    (``state.guided_round``, the guidance appended to every later prompt); the engine runs it
    and calls this step again.
    """

    name = "escalation"

    async def execute(self, run: DesignRun, round_no: int) -> str:
        decision = last_decision(run)
        if decision is None or decision.action != "escalate":
            return "not needed"
        names = run.state.names()
        final = active_final(run)
        stances = {key: stance_of(run, speech) for key, speech in final.items()}
        alternatives = group_stances(stances, question=run.state.question.text, scores=run.state.scores())
        can_continue = len(run.state.continued) < MAX_GUIDED_ROUNDS
        options = escalation_options(alternatives, names, can_continue=can_continue)
        escalation = Escalation(
            reason=decision.reason,
            positions={
                names.get(k, k): (stance or "(restated the question; no position)") for k, stance in stances.items()
            },
            options=options,
        )
        # The first escalation keeps its r0 key; one after a guided round is keyed by that round.
        asked_after = run.state.rounds_done if run.state.continued else 0

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
                round_no=asked_after,
                phase=self.name,
                agent_id="human",
                role="human",
                kind="choice",
                content=f"{choice}: {guidance or ''}".strip(": ") if choice else "no decision (non-interactive run)",
                metadata={"choice": choice, "guidance": guidance, "escalation": escalation.model_dump(mode="json")},
            )

        key = turn_key(asked_after, self.name, "human", "choice")
        turn = await run.record(await run.journal.replay_or_do(key, ask))
        decided = _decided(Escalation.model_validate(turn.metadata["escalation"]), turn)
        option = chosen_option(decided)
        if option is not None and option.kind == "guidance" and option.text == GUIDANCE_OPTION:
            guided = await _continue_with_guidance(run, decided)
            return f"chose {decided.choice}: the debate continues in round {guided} with the person's guidance"
        run.state.escalation = decided
        return f"chose {decided.choice}" if decided.choice else "no decision: recorded in the decision record"


async def _continue_with_guidance(run: DesignRun, escalation: Escalation) -> int:
    """Set up the round the person asked for: its number, and the guidance in every prompt from now on.

    The guidance is also kept in the record of the round that escalated (and its ``round-N.md``), as
    guidance given at a checkpoint after a round is; the escalation is kept in ``state.continued``.
    """
    guidance = escalation.guidance or NO_GUIDANCE
    escalated = run.state.rounds_done
    guided = escalated + 1
    run.state.guidance.append(guidance)
    run.state.continued.append(escalation.model_copy(update={"continued_in_round": guided}))
    run.state.escalation = None
    run.state.guided_round = guided
    if 0 < escalated <= len(run.state.rounds):
        record = run.state.rounds[escalated - 1]
        record.guidance = f"{record.guidance} / {guidance}" if record.guidance else guidance
        if run.files is not None:
            await asyncio.to_thread(run.files.write_round, record, run.state.names())
    return guided


def _announce_decision(
    run: DesignRun, options: Sequence[EscalationOption], choice: str | None, guidance: str | None
) -> None:
    """``EscalationDecided``: the option chosen with its text and guidance, or that nobody chose."""
    if choice is None:
        run.announce(EscalationDecided(run.session_id, None, decided_by="nobody"))
        return
    text = next((o.text for o in options if o.label == choice), "")
    run.announce(EscalationDecided(run.session_id, choice, text, guidance))
