"""Run one debate session (from a command or the server), so that its stored row never outlives the run as open.

The engine settles a session itself (``completed``, ``failed``...) for the
failures it expects. Anything else that escapes it (a bug, a store that fails
mid-way, Ctrl-C before the run started) would leave the row ``pending`` or
``running``; ``run_debate`` marks it ``failed`` (``cancelled`` when
interrupted) before the exception goes on to the CLI's error boundary.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debatecode.config import DebateConfig
    from debatecode.protocol.engine import DebateResult
    from debatecode.protocol.events import EventBus
    from debatecode.protocol.services import Services
    from debatecode.store.repository import SessionStore
    from debatecode.task import Task

__all__ = ["OPEN_STATUSES", "run_debate", "settle_session"]

logger = logging.getLogger(__name__)

OPEN_STATUSES = ("pending", "running")
"""Statuses of a session that is (or claims to be) still going."""


async def run_debate(
    task: Task,
    config: DebateConfig,
    services: Services,
    *,
    bus: EventBus | None = None,
    human: Any = None,
    resume: str | None = None,
) -> DebateResult:
    """Start a session on ``task`` (or resume session ``resume``) and run it to the end.

    The caller closes ``services`` (``async with services:``), in the same event loop.

    Raises:
        SessionNotFound: ``resume`` matches no stored session.
        DebatecodeError, Exception: whatever the engine raises; the session is
            settled (``failed`` / ``cancelled``) first when it was left open.
    """
    from debatecode.protocol.engine import DebateEngine, new_session_id

    engine = DebateEngine.from_config(config, services=services, bus=bus, human=human)
    session_id = services.store.get_session(resume).id if resume is not None else new_session_id()
    try:
        if resume is not None:
            return await engine.resume(session_id, task)
        return await engine.solve(task, session_id=session_id)
    except BaseException as exc:
        settle_session(services.store, session_id, exc)
        raise


def settle_session(store: SessionStore, session_id: str, exc: BaseException) -> None:
    """Mark ``session_id`` ``failed`` (``cancelled`` for Ctrl-C) with ``exc`` as its error, if it is still open.

    Never raises: a store that cannot be read or written is logged, and the
    original exception is what the user sees.
    """
    from debatecode.errors import DebatecodeError
    from debatecode.protocol.state import utcnow

    try:
        record = store.get_session(session_id)
        if record.id != session_id or record.status not in OPEN_STATUSES:
            return
        if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
            status, error = "cancelled", "interrupted by the user"
        else:
            detail = str(exc).strip().splitlines()
            status, error = "failed", f"{type(exc).__name__}: {detail[0] if detail else 'no message'}"
        store.update_session(session_id, status=status, error=error, completed_at=utcnow())
        logger.debug("session %s left %s by %s: marked %s", session_id, record.status, type(exc).__name__, status)
    except DebatecodeError as store_exc:
        logger.warning("could not mark session %s as ended: %s", session_id, store_exc)
