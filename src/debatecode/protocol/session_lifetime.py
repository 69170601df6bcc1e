"""A session's stored row never outlives its run as open: the lease while it runs, and settling it after.

The session driver (``protocol/driver.py``) settles a session itself
(``completed``, ``failed``...) for the failures it expects. Anything else that
escapes it (a bug, a store that fails mid-way, Ctrl-C before the run started)
would leave the row ``pending`` or ``running``; the driver then calls
``settle_session``, which marks it ``failed`` (``cancelled`` when interrupted)
before the exception goes on to the caller (the CLI's error boundary, the
Python API's caller, the server's session thread).

One process at a time runs a session: a run holds the session's lease in the
store (``session_lease``), and a second ``--resume`` of it fails with
``SessionBusy`` naming the process, instead of both writing the same turns.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from debatecode.store.records import SessionLease
    from debatecode.store.repository import SessionStore

__all__ = ["OPEN_STATUSES", "session_lease", "settle_held_sessions", "settle_session"]

logger = logging.getLogger(__name__)

OPEN_STATUSES = ("pending", "running")
"""Statuses of a session that is (or claims to be) still going."""

_held: dict[str, tuple[SessionStore, SessionLease]] = {}
"""The sessions whose lease this process holds: what a forced stop settles before the process exits."""
_held_lock = threading.Lock()


@contextmanager
def session_lease(store: SessionStore, session_id: str, *, resuming: bool) -> Iterator[SessionLease]:
    """Hold ``session_id``'s lease while the block runs: no other process may run or resume it meanwhile.

    A lease left by a process of this host that no longer runs (killed, crashed) is taken over.

    Raises:
        SessionBusy: a live process holds the lease.
        StoreError: the lease could not be read or written.
    """
    from debatecode.errors import DebatecodeError, SessionBusy
    from debatecode.store.records import SessionLease

    here = socket.gethostname()
    lease = SessionLease(
        session_id=session_id, lease_id=uuid.uuid4().hex, pid=os.getpid(), host=here, resuming=resuming
    )
    held = store.claim_session(lease, holder_gone=lambda held: held.host == here and not _process_runs(held.pid))
    if held is not None:
        raise SessionBusy(session_id, pid=held.pid, host=held.host, resuming=held.resuming, here=held.host == here)
    with _held_lock:
        _held[lease.lease_id] = (store, lease)
    try:
        yield lease
    finally:
        with _held_lock:
            _held.pop(lease.lease_id, None)
        try:
            store.release_session(lease)
        except DebatecodeError as exc:  # the next resume takes the lease over once this process is gone
            logger.warning("could not release session %s: %s", session_id, exc)


def settle_held_sessions() -> list[str]:
    """Settle every session this process runs as ``cancelled`` and drop its lease; the ids settled.

    For a forced stop, from any thread, just before the process exits without unwinding:
    the sessions then read ``cancelled`` and ``--resume`` continues them. Never raises.
    """
    from debatecode.errors import DebatecodeError

    with _held_lock:
        held = list(_held.values())
    for store, lease in held:
        settle_session(store, lease.session_id, KeyboardInterrupt())
        try:
            store.release_session(lease)
        except DebatecodeError as exc:
            logger.debug("could not release session %s: %s", lease.session_id, exc)
    return [lease.session_id for _store, lease in held]


def _process_runs(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (one of another user counts too; a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:  # Linux: a killed process its parent has not reaped yet still answers kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def settle_session(store: SessionStore, session_id: str, exc: BaseException) -> None:
    """Mark ``session_id`` ``failed`` (``cancelled`` for Ctrl-C) with ``exc`` as its error, if it is still open.

    Never raises: a store that cannot be read or written is logged, and the
    original exception is what the user sees.
    """
    from debatecode.errors import DebatecodeError
    from debatecode.store.records import utcnow

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
