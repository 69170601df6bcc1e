"""The checker's side of the link to the candidate: ``Remote`` handles and the candidate process. Stdlib only.

The third part of the checker (joined after ``candidate.py``; see ``checker.py``). A ``Remote``
stands for a name in the solution module or an object living in the candidate; it never
compares equal to plain data here. ``Checker`` sends the requests, answers the candidate's
callbacks, and restarts a candidate that died in a fresh interpreter.
"""

from __future__ import annotations

import builtins
import os
import sys

# Annotations only: ``typing`` is never imported when the checker runs (mypy treats this name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # when composed, the parts joined before this one define these names
    from collections.abc import Callable
    from typing import Any, NoReturn

    from debatecode.sandbox._guest.candidate import candidate_main
    from debatecode.sandbox._guest.codec import (
        LABEL_CAP,
        MESSAGE_CAP,
        OUT_CAP,
        CandidateGone,
        Channel,
        TestTimeout,
        WireError,
        decode,
        encode,
    )


class Remote:
    """A name in the solution module, or an object living in the candidate process.

    A test may call it, read and set its attributes, use it as a context manager, and compare it
    for identity. Nothing else: the candidate never decides an operation the test performs on it
    (arithmetic, comparison, ``abs``, ``len``, iteration, truth, ``str``, indexing...). Each of
    those raises ``TypeError`` here, naming the object, so a returned value must be plain data to
    be checked. Its ``repr`` and ``str`` are made here, without asking the candidate.
    """

    _dc_checker: Checker
    _dc_target: dict[str, Any]
    """``{"n": name}`` for a name of the solution, ``{"h": [handle]}`` for an object."""
    _dc_kind: str
    _dc_generation: int
    _dc_label: str

    def __init__(
        self, checker: Checker, target: dict[str, Any], kind: str = "name", generation: int = 0, label: str = ""
    ) -> None:
        object.__setattr__(self, "_dc_checker", checker)
        object.__setattr__(self, "_dc_target", target)
        object.__setattr__(self, "_dc_kind", kind)
        object.__setattr__(self, "_dc_generation", generation)
        object.__setattr__(self, "_dc_label", label)

    def _dc_request(self, message: dict[str, Any]) -> Any:
        checker = self._dc_checker
        if self._dc_kind != "name" and self._dc_generation != checker.generation:
            raise RuntimeError("this object belonged to a candidate process that has since been restarted")
        message["t"] = self._dc_target
        return checker.request(message)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        checker = self._dc_checker
        return self._dc_request({"op": "call", "a": checker.encode(list(args)), "k": checker.encode(kwargs)})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self._dc_request({"op": "getattr", "n": name})

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            raise AttributeError(f"cannot set {name} on a candidate object")
        self._dc_request({"op": "setattr", "n": name, "v": self._dc_checker.encode(value)})

    def __instancecheck__(self, obj: object) -> bool:
        if not isinstance(obj, Remote):
            return False
        checker = self._dc_checker
        return bool(checker.request({"op": "isinstance", "o": obj._dc_target, "c": self._dc_target}) is True)

    def __eq__(self, other: object) -> bool:
        # The candidate's __eq__ is never asked: an object that claims to equal everything would
        # pass any test comparing two of its results. A candidate object equals only itself.
        if not isinstance(other, Remote):
            return NotImplemented
        return self._dc_target == other._dc_target and self._dc_generation == other._dc_generation

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(repr(self._dc_target))

    def __enter__(self) -> Any:
        return self._dc_request({"op": "dunder", "m": "__enter__", "a": []})

    def __exit__(self, *exc_info: object) -> None:
        # Whatever the candidate answers, None: it never swallows the test's own failure.
        self._dc_request({"op": "dunder", "m": "__exit__", "a": [None, None, None]})

    def __repr__(self) -> str:
        return f"<{_printable(self._dc_label) or self._dc_kind} object of the code under test>"

    def __str__(self) -> str:
        return self.__repr__()

    def __format__(self, spec: str) -> str:
        if spec:
            _refuse_operation(self, "format")
        return self.__repr__()

    def _dc_candidate_repr(self) -> str:
        """The candidate's own ``repr`` of the object: for probes, which compare candidates, never for a verdict."""
        try:
            text = self._dc_request({"op": "dunder", "m": "__repr__", "a": []})
        except Exception:
            text = None
        return text if type(text) is str else self.__repr__()


def _printable(text: str) -> str:
    return "".join(char for char in text[:LABEL_CAP] if char.isprintable())


def _refuse_operation(remote: Remote, operation: str) -> NoReturn:
    raise TypeError(
        f"{remote!r} is not plain data, so a test cannot {operation} it: a test may call an object's methods "
        "and read its attributes, and what they return must be plain values "
        "(None, bool, int, float, complex, str, bytes, or lists, tuples, dicts and sets of them)"
    )


ARITHMETIC = [
    "add",
    "sub",
    "mul",
    "matmul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "lshift",
    "rshift",
    "and",
    "xor",
    "or",
]
_REFUSED_OPERATIONS = {
    "take the truth value of": ["__bool__"],
    "take the length of": ["__len__"],
    "iterate over": ["__iter__", "__next__", "__reversed__"],
    "index or change items of": ["__getitem__", "__setitem__", "__delitem__"],
    "look for items in": ["__contains__"],
    "convert": ["__int__", "__float__", "__complex__", "__index__", "__bytes__"],
    "round": ["__round__", "__trunc__", "__floor__", "__ceil__"],
    "compare the order of": ["__lt__", "__le__", "__gt__", "__ge__"],
    "compute with": [f"__{prefix}{name}__" for name in ARITHMETIC for prefix in ("", "r", "i")]
    + ["__divmod__", "__rdivmod__", "__abs__", "__neg__", "__pos__", "__invert__"],
}
"""What a test cannot do with an object of the code under test, by the special methods that would do it."""


def _add_refusal(method: str, operation: str) -> None:
    def refuse(self: Remote, *_args: Any) -> NoReturn:
        _refuse_operation(self, operation)

    refuse.__name__ = method
    setattr(Remote, method, refuse)


for _operation, _methods in _REFUSED_OPERATIONS.items():
    for _method in _methods:
        _add_refusal(_method, _operation)


class Checker:
    """The checker process's view of the candidate: starts it, talks to it, restarts it after a crash."""

    def __init__(self, workdir: str, source: str, first_child: tuple[Channel, int]) -> None:
        self.workdir = workdir
        self.source = source
        self.channel, self.pid = first_child
        self.generation = 1
        self.alive = True
        self.loaded = False
        self.load_error: str | None = None
        self.callbacks: dict[object, Callable[..., Any]] = {}
        """Functions passed to the candidate, by id (an int; looked up with whatever the candidate sends)."""
        self.exceptions: dict[tuple[str, str], type[Exception]] = {}
        self.names: Any = {}
        """What the candidate's ``load`` answered: name -> [kind, value]; checked before each use."""

    # -- values
    def encode(self, value: Any) -> Any:
        return encode(value, self.refer)

    def refer(self, value: Any) -> dict[str, Any]:
        if isinstance(value, Remote):
            target = value._dc_target
            return {"h": target["h"]} if "h" in target else {"n": target["n"]}
        if callable(value) and not isinstance(value, type):
            callback_id = len(self.callbacks) + 1
            self.callbacks[callback_id] = value
            return {"cb": callback_id}
        raise WireError(f"a {type(value).__name__} cannot be passed to the code under test")

    def resolve(self, tag: str, body: Any) -> Any:
        if tag == "n":
            if type(body) is not str:
                raise WireError("malformed name")
            return Remote(self, {"n": body})
        if tag == "cb":
            if body not in self.callbacks:
                raise WireError("unknown callback")
            return self.callbacks[body]
        if type(body) is not list or len(body) < 2 or type(body[0]) is not int:
            raise WireError("malformed object handle")
        if body[1] == "exc" and len(body) > 2:
            return self.exception_class(body[2])
        label = body[2] if len(body) > 2 and type(body[2]) is str else ""
        return Remote(self, {"h": [body[0]]}, kind=str(body[1])[:LABEL_CAP], generation=self.generation, label=label)

    def exception_class(self, mro: Any) -> type[Exception]:
        """A local exception class standing for a candidate's: built-ins are themselves, others are made here."""
        if type(mro) is not list or not mro:
            return RuntimeError
        base: type[BaseException] = Exception
        for entry in mro:
            if type(entry) is list and len(entry) == 2 and entry[0] == "builtins":
                found = getattr(builtins, str(entry[1]), None)
                if isinstance(found, type) and issubclass(found, BaseException):
                    base = found
                    break
        first = mro[0]
        if type(first) is not list or len(first) != 2 or first[0] == "builtins":
            return base if issubclass(base, Exception) else RuntimeError
        if not issubclass(base, Exception):  # SystemExit, KeyboardInterrupt...: never a BaseException here
            base = RuntimeError
        key = (str(first[0]), str(first[1]))
        if key not in self.exceptions:
            self.exceptions[key] = type(key[1].rpartition(".")[2], (base,), {"__module__": key[0]})
        return self.exceptions[key]

    # -- process
    def restart(self) -> None:
        self.kill()
        self.channel, self.pid = spawn_fresh(self.workdir, self.source)
        self.generation += 1
        self.alive = True
        self.loaded = False

    def kill(self) -> None:
        if self.alive:
            self.alive = False
            try:
                os.killpg(self.pid, 9)
            except OSError:
                pass
            try:
                os.kill(self.pid, 9)
            except OSError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.channel.close()

    def ensure_loaded(self) -> None:
        if self.load_error is not None:
            raise RuntimeError(f"the code under test failed to load: {self.load_error}")
        if not self.alive:
            self.restart()
        if not self.loaded:
            self.loaded = True
            try:
                self.names = self.raw_request({"op": "load"})
            except TestTimeout:
                self.load_error = "importing the solution ran past the time limit"
                raise
            except BaseException as exc:
                self.load_error = f"{type(exc).__name__}: {exc}"
                raise

    def request(self, message: dict[str, Any]) -> Any:
        if not self.loaded or not self.alive:
            if not ACCEPTING_CALLS:
                raise RuntimeError("the code under test cannot be called while the tests are being loaded")
            self.ensure_loaded()
        return self.raw_request(message)

    def raw_request(self, message: dict[str, Any]) -> Any:
        try:
            self.channel.send(message)
            while True:
                reply = self.channel.receive()
                if "cb" in reply:
                    self.answer_callback(reply)
                    continue
                break
        except BaseException as exc:  # timeout mid-call, broken pipe, a dead candidate: start afresh next time
            self.kill()
            if isinstance(exc, CandidateGone | OSError):
                raise CandidateGone(f"{exc}") from None
            raise
        out = reply.get("out")
        if type(out) is str and out:
            sys.stdout.write(out[:OUT_CAP])
        if "ok" in reply:
            try:
                return decode(reply["ok"], self.resolve)
            except WireError as exc:
                raise CandidateGone(f"the candidate returned a value that is not plain data: {exc}") from None
        error = reply.get("err")
        if type(error) is not dict:
            self.kill()
            raise CandidateGone("the candidate sent a malformed reply")
        klass = self.exception_class(error.get("mro"))
        raised = klass(str(error.get("msg", ""))[:MESSAGE_CAP])
        raised.candidate_traceback = str(error.get("tb", ""))[-MESSAGE_CAP:]  # type: ignore[attr-defined]
        raise raised

    def answer_callback(self, request: dict[str, Any]) -> None:
        function = self.callbacks.get(request.get("cb"))
        try:
            if function is None:
                raise WireError("unknown callback")
            args = decode(request.get("a", []), self.resolve)
            kwargs = decode(request.get("k", {"d": []}), self.resolve)
            answer = {"ret": self.encode(function(*args, **kwargs))}
        except TestTimeout:
            raise
        except Exception as exc:
            answer = {"raise": [type(exc).__name__, f"{exc}"[:MESSAGE_CAP]]}
        self.channel.send(answer)

    def resolved(self, name: str) -> tuple[str, Any] | None:
        """The checker-side value for the solution's top-level ``name`` once loaded."""
        entry = self.names.get(name) if type(self.names) is dict else None
        if type(entry) is not list or len(entry) != 2:
            return None
        kind, value = entry
        if kind == "data":
            try:
                return ("value", decode(value, self.resolve))
            except WireError:
                return None
        if kind == "module" and type(value) is str and value.partition(".")[0] in sys.stdlib_module_names:
            try:
                __import__(value)
                return ("value", sys.modules[value])
            except ImportError:
                return None
        if kind == "ref" and type(value) is dict and type(value.get("h")) is list:
            handle = value["h"]
            if len(handle) > 2 and handle[1] == "exc":
                return ("value", self.exception_class(handle[2]))
        return None


ACCEPTING_CALLS = False
"""False until every test is in memory and off the disk: no candidate code runs before that."""


def accept_calls() -> None:
    """From now on the candidate may run code: every test is in memory and off the disk."""
    global ACCEPTING_CALLS
    ACCEPTING_CALLS = True


def install_pipes(read_fd: int, write_fd: int) -> None:
    """In a new candidate: its pipes on fds 3 (requests) and 4 (replies), every other fd above 2 closed."""
    high_read, high_write = os.dup2(read_fd, 200), os.dup2(write_fd, 201)
    os.dup2(high_read, 3)
    os.dup2(high_write, 4)
    os.closerange(5, 1 << 16)


def spawn_fresh(workdir: str, source: str) -> tuple[Channel, int]:
    """A new candidate in a fresh interpreter (nothing of the checker's memory survives ``exec``)."""
    flags = ["-I", "-B", "-S"] if sys.flags.no_site else ["-I", "-B"]
    return fork_candidate(
        lambda: os.execv(sys.executable, [sys.executable, *flags, "-c", source, "--candidate", workdir])
    )


def fork_early(workdir: str) -> tuple[Channel, int]:
    """The first candidate: forked before anything secret is read, so its memory holds none of it."""
    return fork_candidate(lambda: candidate_main(3, 4, workdir))


def fork_candidate(become: Callable[[], object]) -> tuple[Channel, int]:
    """A child in its own process group that calls ``become`` (which never returns) with its pipes on fds 3 and 4.

    ``install_pipes`` closes every other fd above 2 first, the verdict's among them.
    """
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            install_pipes(to_child_r, from_child_w)
            become()
        finally:
            os._exit(127)
    os.close(to_child_r)
    os.close(from_child_w)
    return Channel(from_child_r, to_child_w), pid
