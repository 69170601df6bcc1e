"""The in-sandbox job runner: a standalone, stdlib-only script.

The host never imports this module to run it. It sends the source text into
the sandbox as ``python3 -c <source>`` (see ``debatecode.sandbox.wire``),
so it must not import anything from debatecode, and it must keep working on
the sandbox image's plain Python 3.

What it does, in order:

1. Reads the JSON payload from the env vars ``DC_PAYLOAD_0..N`` (pieces of one
   base64 string, each under MAX_ARG_STRLEN) or, if they are absent, from stdin.
2. With ``drop_uid`` set (the runner was started as root inside bubblewrap, with
   only CAP_SETUID/CAP_SETGID), switches to that uid and gid for good.
3. Writes ``files`` into the current directory, refusing absolute paths and
   ``..``.
4. Runs ``argv`` (``python3``/``python`` mean this interpreter) as a child in a
   new session, reading its stdout and stderr concurrently and keeping at most
   ``output_bytes`` of each; the rest is drained and dropped, and flagged.
5. At ``timeout_s`` it SIGKILLs the child's process group. When the child has
   ended, for any reason, it kills every leftover descendant. The runner makes
   itself a child subreaper, so processes that double-fork or ``setsid`` out of
   the group stay its descendants. With ``reap_uid`` set (the runner owns a
   whole PID namespace, as in a container), it also kills every other process
   of its uid that it can see, except itself and its ancestors.
6. Reads back ``collect`` files (capped like the output) and prints exactly one
   line, ``@@DEBATECODE_RESULT@@{json}``, as the last line of its stdout.

Status: ``ok`` (exit 0), ``error`` (non-zero exit, or killed by a signal other
than below), ``timeout`` (killed at ``timeout_s``, or by SIGXCPU from the CPU
rlimit), ``oom``: the job failed and the memory cgroup's ``oom_kill`` counter
(files named in ``oom_counters``, set by the Docker backend) went up meanwhile;
without a readable counter, best effort: the child died of SIGKILL that the
runner did not send. Under RLIMIT_AS
(local backend) memory exhaustion shows up as a failed allocation instead,
usually ``error`` with a MemoryError.

The runner marks itself non-dumpable, so the job (same uid, no capabilities)
can neither ptrace it nor open ``/proc/<runner>/fd/1`` to forge the result
line; it also ignores SIGINT, which the job could otherwise send it.
"""

import base64
import contextlib
import ctypes
import json
import os
import selectors
import signal
import stat
import subprocess
import sys
import time
from typing import Any

MARKER = "@@DEBATECODE_RESULT@@"
PAYLOAD_ENV_PREFIX = "DC_PAYLOAD_"
READ_CHUNK = 65536
DRAIN_AFTER_EXIT_S = 1.0
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


class RefusedPath(ValueError):
    """A job path that would escape the work directory."""


def read_payload() -> dict[str, Any]:
    pieces: list[str] = []
    index = 0
    while True:
        piece = os.environ.pop(PAYLOAD_ENV_PREFIX + str(index), None)
        if piece is None:
            break
        pieces.append(piece)
        index += 1
    raw = base64.b64decode("".join(pieces)) if pieces else sys.stdin.buffer.read()
    payload: dict[str, Any] = json.loads(raw.decode("utf-8"))
    return payload


def drop_privileges(uid: int) -> None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError(f"could not switch to uid {uid}")


def harden_self() -> None:
    """Non-dumpable, child subreaper, SIGINT ignored. Best effort: needs Linux."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def safe_path(root: str, relpath: object) -> str:
    if not isinstance(relpath, str) or not relpath or "\x00" in relpath:
        raise RefusedPath(f"refused empty or invalid path {relpath!r}")
    if os.path.isabs(relpath) or relpath.startswith("\\"):
        raise RefusedPath(f"refused absolute path {relpath!r}")
    if ".." in relpath.replace("\\", "/").split("/"):
        raise RefusedPath(f"refused path with '..': {relpath!r}")
    full = os.path.normpath(os.path.join(root, relpath))
    if not full.startswith(root.rstrip(os.sep) + os.sep):
        raise RefusedPath(f"refused path outside the work dir: {relpath!r}")
    return full


def write_files(root: str, files: dict[str, str]) -> None:
    targets = [(safe_path(root, rel), text) for rel, text in files.items()]
    for full, text in targets:
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)


def read_capped(full: str, cap: int) -> str | None:
    """Read a regular file without following a final symlink, at most ``cap`` bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(full, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = b""
        while len(data) < cap:
            chunk = os.read(fd, min(READ_CHUNK, cap - len(data)))
            if not chunk:
                break
            data += chunk
        return data.decode("utf-8", errors="replace")
    finally:
        os.close(fd)


def collect_files(root: str, relpaths: list[str], cap: int) -> dict[str, str]:
    real_root = os.path.realpath(root)
    found: dict[str, str] = {}
    for rel in relpaths:
        try:
            full = safe_path(root, rel)
            parent = os.path.realpath(os.path.dirname(full))
            if parent != real_root and not parent.startswith(real_root + os.sep):
                continue
            text = read_capped(full, cap)
        except (RefusedPath, OSError):
            continue
        if text is not None:
            found[rel] = text
    return found


def child_setup() -> None:
    os.setsid()
    for signum in (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(signum, signal.SIG_DFL)


def process_table() -> dict[int, tuple[int, int, str | None]]:
    """pid -> (ppid, uid, state) for every process visible in /proc."""
    table: dict[int, tuple[int, int, str | None]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        ppid: int | None = None
        uid: int | None = None
        state: str | None = None
        try:
            with open(f"/proc/{name}/status") as handle:
                for line in handle:
                    if line.startswith("State:"):
                        state = line.split()[1]
                    elif line.startswith("PPid:"):
                        ppid = int(line.split()[1])
                    elif line.startswith("Uid:"):
                        uid = int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid is not None and uid is not None:
            table[int(name)] = (ppid, uid, state)
    return table


def leftover_pids(reap_uid: bool) -> list[int]:
    me = os.getpid()
    table = process_table()
    ancestors: set[int] = set()
    pid = me
    while pid in table and pid not in ancestors:
        ancestors.add(pid)
        pid = table[pid][0]
    targets: set[int] = set()
    frontier = [me]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, _uid, _state) in table.items():
            if ppid == parent and pid not in targets and pid != me:
                targets.add(pid)
                frontier.append(pid)
    if reap_uid:
        uid = os.getuid()
        targets.update(pid for pid, (_p, puid, _s) in table.items() if puid == uid and pid not in ancestors)
    return [pid for pid in targets if table.get(pid, (0, 0, "Z"))[2] != "Z"]


def oom_kills(paths: list[str]) -> int | None:
    """The memory cgroup's OOM-kill count (``oom_kill`` in the first readable file), or None."""
    for path in paths:
        try:
            with open(path) as handle:
                for line in handle:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def reap_zombies() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_leftovers(proc: subprocess.Popen[bytes], reap_uid: bool) -> int:
    """SIGKILL the child's group, reap the child, then kill every leftover until none is left.

    Returns the child's return code. The child is reaped through ``proc`` first,
    so the ``waitpid(-1)`` sweeps below never steal its exit status.
    """
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    returncode = proc.wait()
    for _attempt in range(100):
        pids = leftover_pids(reap_uid)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        reap_zombies()
        time.sleep(0.005)
    reap_zombies()
    return returncode


class CappedSink:
    """Keeps the first ``cap`` bytes of a stream; counts and drops the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > room:
            self.truncated = True

    def text(self) -> str:
        return bytes(self.data).decode("utf-8", errors="replace")


def pump(selector: selectors.BaseSelector, sinks: dict[int, CappedSink], wait_s: float) -> None:
    """Read whatever the pipes have within ``wait_s`` into their sinks; unregister closed ones."""
    for key, _events in selector.select(wait_s):
        chunk = os.read(key.fd, READ_CHUNK)
        if chunk:
            sinks[key.fd].feed(chunk)
        else:
            selector.unregister(key.fd)


def drain(selector: selectors.BaseSelector, sinks: dict[int, CappedSink], until: float) -> None:
    while selector.get_map() and time.monotonic() < until:
        pump(selector, sinks, max(0.0, min(0.05, until - time.monotonic())))


def run_child(payload: dict[str, Any], root: str) -> dict[str, Any]:
    argv = [str(arg) for arg in payload["argv"]]
    if argv and argv[0] in ("python3", "python"):
        argv[0] = sys.executable
    env = dict(os.environ)
    env.update(payload.get("env") or {})
    cap = int(payload["output_bytes"])
    timeout_s = float(payload["timeout_s"])
    reap_uid = bool(payload.get("reap_uid"))
    oom_before = oom_kills(payload.get("oom_counters") or [])
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            close_fds=True,
            preexec_fn=child_setup,
        )
    except OSError as exc:
        return {"status": "error", "exit_code": 127, "stderr": f"cannot start {argv[:1]!r}: {exc}\n"}
    assert proc.stdout is not None and proc.stderr is not None
    out, err = CappedSink(cap), CappedSink(cap)
    sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    selector = selectors.DefaultSelector()
    for fd in sinks:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    deadline = started + timeout_s
    timed_out = False
    while proc.poll() is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        if selector.get_map():
            pump(selector, sinks, min(remaining, 0.05))
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(min(remaining, 0.05))
    duration = time.monotonic() - started
    returncode = kill_leftovers(proc, reap_uid)
    drain(selector, sinks, time.monotonic() + DRAIN_AFTER_EXIT_S)
    selector.close()
    proc.stdout.close()
    proc.stderr.close()
    exit_code: int | None = returncode
    oom_after = oom_kills(payload.get("oom_counters") or [])
    if timed_out or returncode == -signal.SIGXCPU:
        status, exit_code = "timeout", None
    elif returncode != 0 and oom_after is not None and oom_before is not None:
        status = "oom" if oom_after > oom_before else "error"
    elif returncode == -signal.SIGKILL:
        status = "oom"
    else:
        status = "ok" if returncode == 0 else "error"
    return {
        "status": status,
        "exit_code": exit_code,
        "stdout": out.text(),
        "stderr": err.text(),
        "stdout_truncated": out.truncated,
        "stderr_truncated": err.truncated,
        "duration_s": round(duration, 4),
    }


def run_job(payload: dict[str, Any], root: str) -> dict[str, Any]:
    """The result of one payload, run in ``root``: its files written, the child run, ``collect`` read back.

    The one-shot runner (``main``) and the warm-container server (``pool_server.py``) both run jobs here.
    """
    try:
        write_files(root, payload.get("files") or {})
    except RefusedPath as exc:
        return {"status": "error", "exit_code": None, "stderr": f"debatecode runner: {exc}\n"}
    except OSError as exc:
        return {"status": "error", "exit_code": None, "stderr": f"debatecode runner: cannot write files: {exc}\n"}
    result = run_child(payload, root)
    result["files"] = collect_files(root, payload.get("collect") or [], int(payload["output_bytes"]))
    return result


def main() -> dict[str, Any]:
    root = os.getcwd()
    try:
        payload = read_payload()
    except (ValueError, OSError) as exc:
        return {"internal_error": f"unreadable payload: {exc}"}
    if payload.get("drop_uid") is not None:
        drop_privileges(int(payload["drop_uid"]))
    harden_self()
    return run_job(payload, root)


if __name__ == "__main__" and sys.argv[1:2] != ["serve"]:
    # With "serve", the warm-container server appended to this source (pool_server.py) takes over.
    outcome: dict[str, Any]
    try:
        outcome = main()
    except Exception as exc:  # the host turns this into SandboxError
        outcome = {"internal_error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write("\n" + MARKER + json.dumps(outcome, ensure_ascii=False) + "\n")
    sys.stdout.flush()
