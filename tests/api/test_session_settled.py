"""Every entry path settles its session: a crash through the Python API leaves it ``failed``, and resumable."""

from __future__ import annotations

import pytest
from tests.api.conftest import ADD_TASK, dummy_services

from debatecode import DebateConfig, solve_async
from debatecode.protocol.events import Event, EventBus, PhaseCompleted


class _Bug(RuntimeError):
    """Something the engine does not expect (a subscriber's bug), raised in the middle of the debate."""


async def test_a_crash_through_the_python_api_leaves_the_session_failed_and_resumable(config: DebateConfig) -> None:
    bus = EventBus()
    started: list[str] = []

    def crash_after_proposal(event: Event) -> None:
        started.append(event.session_id)
        if isinstance(event, PhaseCompleted) and event.phase == "proposal":
            raise _Bug("the subscriber broke after the proposal")

    bus.subscribe(crash_after_proposal, critical=True)
    services = dummy_services(config)
    try:
        with pytest.raises(_Bug):
            await solve_async(ADD_TASK, config, bus=bus, services=services)
        session = services.store.get_session(started[0])
        assert session.status == "failed", "the session is settled, not left running"
        assert session.error == "_Bug: the subscriber broke after the proposal"
        assert session.completed_at is not None
        phases = {t.phase for t in services.store.turns(session.id)}
        assert "proposal" in phases and "convergence" not in phases, "the turns before the crash are kept"

        resumed = await solve_async(ADD_TASK, config, services=services, resume=session.id)
    finally:
        await services.aclose()

    assert resumed.session.id == session.id
    assert resumed.status == "completed" and resumed.all_passed
