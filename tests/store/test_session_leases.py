"""One process at a time runs a session: a second run or ``--resume`` of it is refused, naming the process.

The lease is a row of ``session_leases``; one left by a process that died (killed, crashed, or
killed and not yet reaped) is taken over, so a crash never locks a session for good.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from debatecode.errors import ExitCode, SessionBusy
from debatecode.protocol.session_lifetime import session_lease
from debatecode.store import SessionStore
from debatecode.store.records import SessionLease


def lease_of(pid: int, *, host: str | None = None, resuming: bool = True) -> SessionLease:
    return SessionLease(
        session_id="s1", lease_id=f"lease-{pid}", pid=pid, host=host or socket.gethostname(), resuming=resuming
    )


def leases(store: SessionStore) -> list[SessionLease]:
    held = store.lease("s1")
    return [held] if held is not None else []


@pytest.fixture
def other_process() -> Iterator[int]:
    """The pid of another live process of this host."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def test_a_second_resume_is_refused_naming_the_process_that_resumes(store: SessionStore, other_process: int) -> None:
    assert store.claim_session(lease_of(other_process), holder_gone=lambda _held: False) is None
    with pytest.raises(SessionBusy) as refused, session_lease(store, "s1", resuming=True):
        pytest.fail("entered a session another process resumes")
    message = str(refused.value)
    assert f"this session (s1) is already being resumed (pid {other_process})" in message
    assert f"kill {other_process}" in message and "--resume s1" in message
    assert refused.value.exit_code == ExitCode.RUN_FAILED  # valid input: it works once the other process ends
    assert [held.pid for held in leases(store)] == [other_process], "the other process keeps its lease"


def test_a_run_holds_the_lease_until_it_ends_and_then_drops_it(store: SessionStore) -> None:
    with session_lease(store, "s1", resuming=False) as lease:
        busy = rf"already being run \(pid {os.getpid()}\)"
        with pytest.raises(SessionBusy, match=busy), session_lease(store, "s1", resuming=True):
            pytest.fail("two runs of one session in one process")
        assert [held.lease_id for held in leases(store)] == [lease.lease_id]
    assert leases(store) == []


def test_the_lease_of_a_dead_process_is_taken_over(store: SessionStore) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    store.claim_session(lease_of(gone.pid), holder_gone=lambda _held: False)
    with session_lease(store, "s1", resuming=True) as lease:
        assert [held.lease_id for held in leases(store)] == [lease.lease_id]
        store.release_session(lease_of(gone.pid))  # the old holder's release never drops the new lease
        assert [held.lease_id for held in leases(store)] == [lease.lease_id]


def test_the_lease_of_a_killed_process_not_yet_reaped_is_taken_over(store: SessionStore) -> None:
    zombie = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        os.kill(zombie.pid, signal.SIGKILL)
        os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # dead, still in the process table
        store.claim_session(lease_of(zombie.pid), holder_gone=lambda _held: False)
        with session_lease(store, "s1", resuming=True) as lease:  # SessionBusy here would be the bug
            assert [held.lease_id for held in leases(store)] == [lease.lease_id], "the zombie's lease was replaced"
    finally:
        zombie.wait()


def test_a_lease_held_on_another_host_is_never_taken_over(store: SessionStore) -> None:
    store.claim_session(lease_of(1, host="build-7"), holder_gone=lambda _held: False)
    busy = r"already being resumed \(pid 1 on host build-7\); .*stop it on build-7"
    with pytest.raises(SessionBusy, match=busy), session_lease(store, "s1", resuming=True):
        pytest.fail("took over a lease it cannot check")


def test_of_many_claims_at_once_exactly_one_wins(store: SessionStore) -> None:
    barrier = threading.Barrier(8)

    def claim(n: int) -> SessionLease | None:
        barrier.wait()
        return store.claim_session(lease_of(n), holder_gone=lambda _held: False)

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(claim, range(100, 108)))
    assert sum(outcome is None for outcome in outcomes) == 1
    winner = store.lease("s1")
    assert winner is not None and all(outcome in (None, winner) for outcome in outcomes)
