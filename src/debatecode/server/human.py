"""The human of a session the server runs: checkpoints and escalations wait for a REST call, from any thread.

``WebHuman`` plays the part the terminal plays for ``debatecode solve`` and
``debatecode debate`` (``cli/human.py``), through the same ``HumanInterface``
the engine calls: a checkpoint waits for ``POST .../checkpoint``, and an
escalated design debate waits for ``POST .../escalation``. The choice then takes
the very path a terminal answer takes: the escalation step journals it and the
decision record is written from it. Clarifying questions go to the Moderator,
and gates wait for a decision in the store (``POST .../gates/approve``), as for
any session without a terminal.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debatecode.errors import UserError
from debatecode.protocol.human import CheckpointDecision

if TYPE_CHECKING:
    from collections.abc import Callable

    from debatecode.protocol.events import Event

__all__ = ["EscalationQuestion", "UnknownOption", "WebHuman"]

logger = logging.getLogger(__name__)

ESCALATION_TITLE = "Escalation: "
"""How the design debate's escalation step starts the title it asks with; the rest is the reason."""


class UnknownOption(UserError):
    """The option chosen at an escalation is not one of those offered."""


@dataclass(frozen=True)
class EscalationQuestion:
    """An escalated design debate, as the human is asked it."""

    reason: str
    summary: str
    options: tuple[tuple[str, str], ...]
    """``(label, text)`` of each option, in order."""
    positions: dict[str, str]

    def option(self, label: str) -> tuple[str, str]:
        """The option labelled ``label`` (any case).

        Raises:
            UnknownOption: no option has that label.
        """
        wanted = label.strip().upper()
        for option in self.options:
            if option[0].upper() == wanted:
                return option
        known = ", ".join(option[0] for option in self.options)
        raise UnknownOption(f"option {label!r} is not one of those offered ({known})")


class _Pending:
    """One question waiting for its answer: the loop it waits on and the future it waits for."""

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]) -> None:
        self.loop = loop
        self.future = future
        self.answered = False

    def settle(self, answer: Any) -> None:
        self.answered = True

        def settle() -> None:
            if not self.future.done():
                self.future.set_result(answer)

        self.loop.call_soon_threadsafe(settle)


class WebHuman:
    """The human of one session run by the server; its questions wait for REST calls.

    ``bind`` hands it the session's id once the session exists. It announces
    nothing itself: the design debate's escalation step emits ``Escalated``
    before it asks and ``EscalationDecided`` once answered, on the session's
    bus, whoever the human is (so the server's feed gets each exactly once).
    An escalation nobody answers within ``choice_timeout_s`` is left open: the
    record says nobody decided.

    A question is answerable from the moment it is announced: ``announced`` (called
    with every event of the session's bus, inside ``emit``) opens a checkpoint or an
    escalation that awaits a human before the engine asks, so an answer sent as soon
    as the page shows the question is kept for the engine, never refused.
    """

    def __init__(self, *, choice_timeout_s: float = 1800.0) -> None:
        self.choice_timeout_s = choice_timeout_s
        self._lock = threading.Lock()
        self._checkpoint: tuple[int, _Pending] | None = None
        self._escalation: tuple[EscalationQuestion, _Pending] | None = None
        self._publish: Callable[[Event], None] | None = None
        self._session_id = ""

    def bind(self, publish: Callable[[Event], None], session_id: str) -> None:
        """The session this human answers for.

        ``publish`` (the session's feed) is kept for callers that announce on the human's behalf; the
        escalation step announces escalations on the session's bus, so the human publishes nothing.
        """
        self._publish, self._session_id = publish, session_id

    def announced(self, event: Event) -> None:
        """Open the checkpoint or escalation ``event`` announces (in the session's loop, inside ``emit``)."""
        from debatecode.protocol.events import CheckpointRequested, Escalated

        opens_escalation = isinstance(event, Escalated) and event.awaiting and bool(event.options)
        if not isinstance(event, CheckpointRequested) and not opens_escalation:
            return
        try:
            pending = self._new_pending()
        except RuntimeError:  # emitted outside the session's loop: the question opens when it is asked
            return
        with self._lock:
            if isinstance(event, CheckpointRequested):
                self._checkpoint = (event.round, pending)
            elif isinstance(event, Escalated):
                options = tuple((str(o.get("label", "")), str(o.get("text", ""))) for o in event.options)
                question = EscalationQuestion(event.reason, event.summary, options, dict(event.positions))
                self._escalation = (question, pending)

    # -- what the engine asks ---------------------------------------------------------------

    async def answer_questions(self, questions: list[dict[str, str]]) -> list[str] | None:
        return None

    async def approve(self, phase: str, summary: str) -> bool | None:
        return None

    async def checkpoint(self, round_no: int, summary: str) -> CheckpointDecision:
        with self._lock:
            if self._checkpoint is None or self._checkpoint[0] != round_no:  # not announced through ``announced``
                self._checkpoint = (round_no, self._new_pending())
            pending = self._checkpoint[1]
        try:
            answer: CheckpointDecision = await pending.future
            return answer
        finally:
            with self._lock:
                if self._checkpoint is not None and self._checkpoint[1] is pending:
                    self._checkpoint = None

    async def choose(
        self, title: str, summary: str, options: Sequence[tuple[str, str]]
    ) -> tuple[str, str | None] | None:
        """An escalated design debate (already announced by the escalation step): wait for ``POST .../escalation``.

        None when nobody chose within ``choice_timeout_s``; the step announces that answer too.
        """
        question = EscalationQuestion(
            reason=title.removeprefix(ESCALATION_TITLE),
            summary=summary,
            options=tuple((str(label), str(text)) for label, text in options),
            positions=_positions(summary),
        )
        with self._lock:
            opened = self._escalation
            if opened is None or opened[0].options != question.options:  # not announced through ``announced``
                opened = (question, self._new_pending())
            self._escalation = (question, opened[1])
            pending = opened[1]
        try:
            picked: tuple[str, str | None] = await asyncio.wait_for(pending.future, self.choice_timeout_s)
        except TimeoutError:
            logger.warning(
                "nobody chose an option of escalated session %s within %gs; its record says so",
                self._session_id,
                self.choice_timeout_s,
            )
            return None
        finally:
            with self._lock:
                if self._escalation is not None and self._escalation[1] is pending:
                    self._escalation = None
        return picked

    # -- what a REST call answers ---------------------------------------------------------

    @property
    def waiting_round(self) -> int | None:
        """The round whose checkpoint waits for an answer, if one does."""
        with self._lock:
            waiting = self._checkpoint
        return waiting[0] if waiting is not None and not waiting[1].answered else None

    @property
    def escalation(self) -> EscalationQuestion | None:
        """The escalation waiting for a choice, if one does."""
        with self._lock:
            waiting = self._escalation
        return waiting[0] if waiting is not None and not waiting[1].answered else None

    def decide(self, decision: CheckpointDecision) -> int | None:
        """Answer the waiting checkpoint; the round answered, or None when none waits."""
        with self._lock:
            if self._checkpoint is None or self._checkpoint[1].answered:
                return None
            round_no, pending = self._checkpoint
            pending.settle(decision)
        return round_no

    def choose_option(self, label: str, guidance: str | None) -> tuple[str, str] | None:
        """Choose option ``label`` of the waiting escalation; ``(label, text)``, or None when none waits.

        Raises:
            UnknownOption: the escalation offers no option ``label`` (it goes on waiting).
        """
        with self._lock:
            if self._escalation is None or self._escalation[1].answered:
                return None
            question, pending = self._escalation
            chosen = question.option(label)
            pending.settle((chosen[0], (guidance or "").strip() or None))
        return chosen

    # -- inside ---------------------------------------------------------------------------

    @staticmethod
    def _new_pending() -> _Pending:
        loop = asyncio.get_running_loop()
        return _Pending(loop, loop.create_future())


def _positions(summary: str) -> dict[str, str]:
    """``- Name: stance`` lines of an escalation summary, as ``{name: stance}``."""
    found: dict[str, str] = {}
    for line in summary.splitlines():
        name, sep, stance = line.removeprefix("- ").partition(": ")
        if line.startswith("- ") and sep and name.strip():
            found[name.strip()] = stance.strip()
    return found
