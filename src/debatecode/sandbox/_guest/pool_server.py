"""The warm-container server: the runner kept alive between jobs. Stdlib only.

The host never imports this module to run it. It appends this source to
``runner.py``'s and starts the result as ``python3 -c <source> serve``, as the
container's PID 1. The kernel drops every signal that a process inside the
container sends to its PID 1 (unless PID 1 handles it, which this server never
does), so a job can neither stop nor kill the server; and the server, like the
runner, is non-dumpable, so a job can neither ptrace it nor open its
``/proc/1/fd`` to reach the host connection.

Protocol, over the container's stdin and stdout (the host attaches to both):

- after a full reset at start-up: one line ``@@DEBATECODE_READY@@{...}``;
- per request (one line: the job payload as JSON): ``@@DEBATECODE_ACK@@{}`` as
  soon as the line is read, then the runner's result line
  ``@@DEBATECODE_RESULT@@{json}``. An ACK tells the host that the job started,
  so that a container lost *before* it may be retried safely elsewhere.

After each job the server resets the container before it reads the next
request: it kills every other process in the container (daemons that
double-forked or called ``setsid`` included: all of them are in this PID
namespace), empties ``/work``, ``/tmp``, ``/dev/shm`` and ``/dev/mqueue``, and
removes every SysV IPC object. If anything survives the reset, it exits with
code 3 and the host replaces the container. It also exits at end of input (the
host closed its connection, or died) and after ``DC_IDLE_TTL_S`` seconds
without a request; the container is created with auto-remove, so both leave
nothing behind.
"""

import contextlib
import ctypes
import json
import os
import select
import stat
import sys
import time
import typing

if typing.TYPE_CHECKING:  # when composed, these come from runner.py's source above
    from debatecode.sandbox._guest.runner import (
        MARKER,
        harden_self,
        process_table,
        reap_zombies,
        run_job,
    )

READY_MARKER = "@@DEBATECODE_READY@@"
ACK_MARKER = "@@DEBATECODE_ACK@@"
WIPE_DIRS = ("/work", "/tmp", "/dev/shm", "/dev/mqueue")
IDLE_TTL_ENV = "DC_IDLE_TTL_S"
RESET_FAILED_EXIT = 3
NOT_PID1_EXIT = 2
IPC_RMID = 0


def emit(marker: str, data: dict[str, typing.Any]) -> None:
    """Write one protocol line to stdout, whole."""
    line = (marker + json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")
    view = memoryview(line)
    while view:
        written = os.write(1, view)
        view = view[written:]


def read_requests(idle_ttl_s: float) -> typing.Iterator[bytes]:
    """Request lines from stdin, until end of input or ``idle_ttl_s`` without one."""
    buffer = bytearray()
    while True:
        newline = buffer.find(b"\n")
        if newline >= 0:
            line = bytes(buffer[:newline])
            del buffer[: newline + 1]
            if line.strip():
                yield line
            continue
        ready, _, _ = select.select([0], [], [], idle_ttl_s)
        if not ready:
            return
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return
        buffer += chunk


def kill_everything_else() -> bool:
    """SIGKILL every other process in this PID namespace until none is left; False if some survive."""
    me = os.getpid()
    for _attempt in range(400):
        others = [pid for pid, (_ppid, _uid, state) in process_table().items() if pid != me and state != "Z"]
        if not others:
            reap_zombies()
            return True
        for pid in others:
            try:
                os.kill(pid, 9)
            except OSError:
                continue
        reap_zombies()
        time.sleep(0.005)
    return False


def remove_tree(top: str) -> None:
    """Remove a directory tree the job made, even one it made unreadable; errors are left to the caller's check."""
    stack = [(top, False)]
    while stack:
        path, listed = stack.pop()
        if listed:
            with contextlib.suppress(OSError):
                os.rmdir(path)
            continue
        try:
            os.chmod(path, stat.S_IRWXU)
            entries = list(os.scandir(path))
        except OSError:
            continue
        stack.append((path, True))
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, False))
                else:
                    os.unlink(entry.path)
            except OSError:
                continue


def wipe(directory: str) -> list[str]:
    """Remove everything inside ``directory``; return what could not be removed."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                remove_tree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
    try:
        return [os.path.join(directory, name) for name in os.listdir(directory)]
    except OSError:
        return []


def sysv_ipc_ids() -> dict[str, list[int]]:
    """Live SysV IPC objects of this IPC namespace: kind -> ids."""
    found: dict[str, list[int]] = {}
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        ids = [int(row.split()[1]) for row in rows if len(row.split()) > 1]
        if ids:
            found[kind] = ids
    return found


def remove_sysv_ipc() -> None:
    """Remove every SysV shared memory segment, semaphore set and message queue (all are the job uid's)."""
    found = sysv_ipc_ids()
    if not found:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for ipc_id in found.get("shm", []):
        libc.shmctl(ipc_id, IPC_RMID, None)
    for ipc_id in found.get("sem", []):
        libc.semctl(ipc_id, 0, IPC_RMID)
    for ipc_id in found.get("msg", []):
        libc.msgctl(ipc_id, IPC_RMID, None)


def reset() -> str:
    """Bring the container back to its pristine state; return what is still wrong ("" when clean)."""
    if not kill_everything_else():
        return "processes survived SIGKILL"
    leftovers = [path for directory in WIPE_DIRS if os.path.isdir(directory) for path in wipe(directory)]
    if leftovers:
        return f"could not remove {leftovers[:5]}"
    remove_sysv_ipc()
    remaining = sysv_ipc_ids()
    if remaining:
        return f"SysV IPC objects survived: {remaining}"
    return ""


def serve() -> None:
    """Answer job requests until end of input or the idle limit; exit 3 when a reset fails.

    Refuses to start (exit 2) unless it is PID 1: its reset kills every other
    process it can see, which is only safe inside its own PID namespace.
    """
    if os.getpid() != 1:
        sys.stderr.write("debatecode pool server: refusing to serve: not PID 1 of a container\n")
        sys.exit(NOT_PID1_EXIT)
    root = os.getcwd()
    idle_ttl_s = float(os.environ.pop(IDLE_TTL_ENV, "600"))
    harden_self()
    problem = reset()
    if problem:
        sys.stderr.write(f"debatecode pool server: initial reset failed: {problem}\n")
        sys.exit(RESET_FAILED_EXIT)
    emit(READY_MARKER, {"pid": os.getpid(), "uid": os.getuid()})
    for line in read_requests(idle_ttl_s):
        emit(ACK_MARKER, {})
        try:
            result = run_job(json.loads(line.decode("utf-8")), root)
        except Exception as exc:  # the host turns this into SandboxError
            result = {"internal_error": f"{type(exc).__name__}: {exc}"}
        emit(MARKER, result)
        os.chdir(root)
        problem = reset()
        if problem:
            sys.stderr.write(f"debatecode pool server: reset failed, exiting: {problem}\n")
            sys.exit(RESET_FAILED_EXIT)


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    serve()
