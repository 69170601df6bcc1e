"""The candidate side of the checker: imports the code under test and serves the checker's calls. Stdlib only.

The second part of the checker (joined after ``codec.py``; see ``checker.py``). The candidate is
a child forked before any test is read, or a fresh interpreter after a crash. It holds no file
descriptor of the verdict channel, and what it sends back is plain data (``codec``) or a handle
on an object that stays here.
"""

from __future__ import annotations

import builtins
import os
import sys

# ``signals`` serves the later parts too (session.py's ``Alarm`` times every test with it).
try:  # the C module: ``signal`` itself would import enum, several ms per job
    import _signal as signals
except ImportError:  # pragma: no cover - not CPython
    import signal as signals

# Annotations only: ``typing`` is never imported when the checker runs (mypy treats this name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # when composed, the parts joined before this one define these names
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any, NoReturn

    from debatecode.sandbox._guest.codec import (
        LABEL_CAP,
        MESSAGE_CAP,
        OUT_CAP,
        SOLUTION_MODULE,
        CandidateGone,
        Channel,
        WireError,
        _describe_exception,
        decode,
        encode,
    )

SERVED_DUNDERS = frozenset(["__enter__", "__exit__", "__repr__"])
"""The only special methods of a candidate object the checker asks for: a context manager's two (the answer of
``__exit__`` is ignored, so the code cannot swallow a test's failure) and ``repr`` for probes, never for a verdict."""


class _Capture:
    """sys.stdout for the code under test during one call: text kept up to OUT_CAP."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: object) -> int:
        text = str(text)
        if self.size < OUT_CAP:
            self.parts.append(text[: OUT_CAP - self.size])
        self.size += len(text)
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def value(self) -> str:
        return "".join(self.parts)


class CandidateServer:
    """Runs in the candidate process: imports the solution and answers the checker's requests."""

    def __init__(self, channel: Channel, workdir: str) -> None:
        self.channel = channel
        self.workdir = workdir
        self.module: ModuleType | None = None
        self.objects: dict[int, Any] = {}
        self.next_id = 1
        self.stubs: dict[int, int] = {}
        self.handles: dict[int, int] = {}
        """id() of each object in ``objects`` -> its handle (``objects`` keeps it alive, so the id stays its own)."""

    def refer(self, value: Any) -> dict[str, Any]:
        stub_id = self.stubs.get(id(value))
        if stub_id is not None:
            return {"cb": stub_id}
        # One handle per object: the checker compares handles, so an object reached twice must equal itself.
        handle = self.handles.get(id(value))
        if handle is None:
            handle = self.next_id
            self.next_id += 1
            self.objects[handle] = value
            self.handles[id(value)] = handle
        if isinstance(value, type) and issubclass(value, BaseException):
            kind = "exc"
        elif isinstance(value, type):
            kind = "class"
        elif callable(value):
            kind = "fn"
        else:
            kind = "obj"
        info: dict[str, list[Any]] = {"h": [handle, kind]}
        if kind == "exc":
            info["h"].append([[k.__module__, k.__qualname__] for k in value.__mro__])
        else:  # a name for messages only: the checker never trusts it for anything else
            named = value if kind in ("class", "fn") else type(value)
            info["h"].append(str(getattr(named, "__qualname__", "") or type(value).__name__)[:LABEL_CAP])
        return info

    def resolve(self, tag: str, body: Any) -> Any:
        if tag == "h":
            if type(body) is not list or not body or body[0] not in self.objects:
                raise WireError("unknown object handle")
            return self.objects[body[0]]
        if tag == "n":
            return self.target({"n": body})
        return self.stub(body)

    def stub(self, callback_id: int) -> Callable[..., Any]:
        server = self

        def call_checker(*args: Any, **kwargs: Any) -> Any:
            server.channel.send(
                {"cb": callback_id, "a": encode(list(args), server.refer), "k": encode(kwargs, server.refer)}
            )
            return server.serve(until_reply=True)

        self.stubs[id(call_checker)] = callback_id
        self.objects[-callback_id] = call_checker  # keeps id() stable
        return call_checker

    def target(self, spec: Any) -> Any:
        if type(spec) is dict and "n" in spec:
            if self.module is None:
                raise WireError("the solution is not loaded")
            name = spec["n"]
            if type(name) is not str or name not in self.module.__dict__:
                raise NameError(f"the code defines no {name!r}")
            return self.module.__dict__[name]
        return self.resolve("h", spec.get("h") if type(spec) is dict else None)

    def load(self) -> dict[str, list[Any]]:
        module = type(sys)(SOLUTION_MODULE)
        module.__file__ = os.path.join(self.workdir, SOLUTION_MODULE + ".py")
        sys.modules[SOLUTION_MODULE] = module
        with open(module.__file__, encoding="utf-8") as handle:
            source = handle.read()
        self.module = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        names: dict[str, list[Any]] = {}
        for name, value in list(module.__dict__.items()):
            if name.startswith("__"):
                continue
            if isinstance(value, type(sys)):
                names[name] = ["module", value.__name__]
                continue
            try:
                names[name] = ["data", encode(value, _refuse)]
            except WireError:
                names[name] = ["ref", self.refer(value)]
        return names

    def handle(self, message: dict[str, Any]) -> Any:
        op = message.get("op")
        if op == "load":
            return self.load()
        if op == "call":
            func = self.target(message.get("t"))
            args = decode(message.get("a", []), self.resolve)
            kwargs = decode(message.get("k", {"d": []}), self.resolve)
            return func(*args, **kwargs)
        if op == "getattr":
            return getattr(self.target(message.get("t")), str(message.get("n")))
        if op == "setattr":
            return setattr(self.target(message.get("t")), str(message.get("n")), decode(message.get("v"), self.resolve))
        if op == "dunder":
            method = str(message.get("m"))
            if method not in SERVED_DUNDERS:
                raise WireError(f"{method} is not served")
            obj = self.target(message.get("t"))
            args = decode(message.get("a", []), self.resolve)
            if method == "__repr__":
                return repr(obj)
            return getattr(type(obj), method)(obj, *args)
        if op == "isinstance":
            return isinstance(self.target(message.get("o")), self.target(message.get("c")))
        raise WireError(f"unknown request {op!r}")

    def serve(self, until_reply: bool = False) -> Any:
        """Answer requests; with ``until_reply``, return when the checker answers our callback."""
        while True:
            message = self.channel.receive()
            if "ret" in message or "raise" in message:
                if not until_reply:
                    raise CandidateGone("unexpected callback answer")
                if "raise" in message:
                    raise _callback_error(message["raise"])
                return decode(message["ret"], self.resolve)
            saved, capture = sys.stdout, _Capture()
            sys.stdout = capture
            try:
                reply: dict[str, Any] = {"ok": encode(self.handle(message), self.refer)}
            except BaseException as exc:  # the code's failure is a reply, not our crash
                sys.stdout = saved
                reply = {"err": _describe_exception(exc)}
            finally:
                sys.stdout = saved
            reply["out"] = capture.value()
            self.channel.send(reply)


def _callback_error(raised: object) -> BaseException:
    """The exception a test's callback raised, as the code under test sees it: built-ins keep their type."""
    name, message = raised if type(raised) is list and len(raised) == 2 else ["RuntimeError", raised]
    found = getattr(builtins, str(name), None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found(str(message))
    return RuntimeError(f"the test's callback raised {str(name)[:100]}: {str(message)[:MESSAGE_CAP]}")


def _refuse(value: object) -> NoReturn:
    raise WireError("not plain data")


def candidate_main(read_fd: int, write_fd: int, workdir: str) -> NoReturn:
    """Entry of the candidate process once its pipes are on ``read_fd``/``write_fd``."""
    # Keep the protocol off fds 0 and 1, so stray writes of the code reach stderr, not the checker.
    read_fd, write_fd = os.dup(read_fd), os.dup(write_fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115
    sys.stdout = sys.__stdout__ = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace")  # type: ignore[misc]
    signals.signal(signals.SIGALRM, signals.SIG_DFL)
    os.chdir(workdir)
    add_image_paths(workdir)
    sys.path.insert(0, workdir)
    try:
        CandidateServer(Channel(read_fd, write_fd), workdir).serve()
    except CandidateGone:
        pass
    os._exit(0)


def add_image_paths(workdir: str) -> None:
    """``-I`` ignores PYTHONPATH; the image's (set by the host, never by the code) is added back, after the stdlib."""
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        full = os.path.abspath(entry) if entry else ""
        if full and full not in sys.path and not (full + os.sep).startswith(workdir + os.sep):
            sys.path.append(full)
