"""The in-sandbox test checker: it owns the tests and the verdict; the code under test runs apart. Stdlib only.

The host writes this file into the job as ``_dc_check.py`` and runs
``python3 -I -B _dc_check.py PLAN_FILE``. Two processes take part:

- the **checker** (this process) reads the plan, the nonce and every test file
  into memory, deletes them from the work dir, runs the tests, compares
  results, and writes verdict lines to a private copy of its stdout;
- the **candidate** (a child forked before any test is read, or a fresh
  interpreter after a crash) imports ``solution.py`` and serves calls over a
  pair of pipes. It holds no file descriptor of the verdict channel.

What crosses from the candidate is plain data only: None, bool, int, float,
str, bytes, complex and lists, tuples, dicts, sets and frozensets of them,
decoded here from JSON into exact built-in types. Subclasses of built-ins are
refused (a few ``collections`` types and named tuples are converted to their
base type by value). Any other object stays in the candidate and is reached
through a ``Remote`` handle; a handle never compares equal to plain data here.
So ``==``, ``assert`` and the verdict itself always run in this process, on
values the candidate cannot dress up.

The checker is non-dumpable, so the candidate (same uid, no capabilities)
cannot read its memory, ptrace it, or open ``/proc/<checker>/fd/*``. Killing or
stopping the checker only loses the verdict, which the host scores as failure.

Verdict lines: ``@@DC_VERDICT@@ <nonce> <json>`` with events ``collected``,
``result``, ``probe`` and finally ``done``. Plan modes: ``light`` (``test_*``
functions and HumanEval's ``check``), ``pytest`` (pytest modules, run by
pytest inside this process) and ``probe`` (evaluate call expressions).
"""

from __future__ import annotations

import _json
import builtins
import os
import sys
import time

try:  # the C module: ``signal`` itself would import enum, several ms per job
    import _signal as signals
except ImportError:  # pragma: no cover - not CPython
    import signal as signals

# Annotations only: ``typing`` is never imported when the checker runs (mypy treats this name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator
    from types import ModuleType
    from typing import Any, NoReturn, TypeAlias

    import pytest

    Refer: TypeAlias = Callable[[Any], Any]
    """Turns an object that is not plain data into its wire form (a handle or a callback id)."""
    Resolve: TypeAlias = Callable[[str, Any], Any]
    """Turns a handle, callback or name tag and its body back into an object."""
    Import: TypeAlias = tuple[str, str | None, str]
    """(module, attribute or None for ``import module``, the name it is bound to)."""

MARK = "@@DC_VERDICT@@"
LINE_CAP = 8 * 1024 * 1024
"""Largest message accepted from the candidate, in bytes."""
OUT_CAP = 64 * 1024
"""Candidate stdout kept per call."""
MESSAGE_CAP = 2000
DEPTH_CAP = 100
PR_SET_DUMPABLE = 4
SOLUTION_MODULE = "solution"
COMPILED_FILE = ".dc_check.code"
TASK_FILE = "_dc_task.py"
"""The task's own definitions, when the plan names them (``task_file``)."""
SERVED_DUNDERS = frozenset(["__enter__", "__exit__", "__repr__"])
"""The only special methods of a candidate object the checker asks for: a context manager's two (the answer of
``__exit__`` is ignored, so the code cannot swallow a test's failure) and ``repr`` for probes, never for a verdict."""
ITER_CAP = 10_000
"""Items taken from an iterator (a generator, ``map``...) the code returns; past this, using it fails the test."""
HEAP_TYPE = 1 << 9
"""``Py_TPFLAGS_HEAPTYPE``: set on every class made by a ``class`` statement, clear on the interpreter's own types."""
LABEL_CAP = 80


class WireError(Exception):
    """A value that cannot cross between the processes, or a malformed message."""


# JSON through the C accelerator directly: the ``json`` package would import ``re`` (milliseconds per job).
class _ScanContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


_SCAN = _json.make_scanner(_ScanContext())  # type: ignore[arg-type]  # any object with these attributes
_QUOTE = _json.encode_basestring_ascii


def json_loads(text: str | bytes) -> Any:
    """One JSON document (str or bytes); ValueError when it is not exactly one."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogatepass")
    start = len(text) - len(text.lstrip())
    try:
        value, end = _SCAN(text, start)
    except StopIteration:
        raise ValueError("no JSON value") from None
    if text[end:].strip():
        raise ValueError("extra data after the JSON value")
    return value


def json_dumps(value: Any, depth: int = 0) -> str:
    """Compact JSON of None, bool, int, float, str, and lists and str-keyed dicts of them."""
    if depth > DEPTH_CAP + 10:
        raise WireError("value nested too deeply")
    kind = type(value)
    if kind is str:
        return _QUOTE(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    if kind is list or kind is tuple:
        return "[" + ",".join(json_dumps(item, depth + 1) for item in value) + "]"
    if kind is dict:
        return "{" + ",".join(_QUOTE(str(k)) + ":" + json_dumps(v, depth + 1) for k, v in value.items()) + "}"
    return _QUOTE(str(value))


class TestTimeout(BaseException):
    """Raised in the checker by SIGALRM. A BaseException, so test code's ``except Exception`` does not swallow it."""


class CandidateGone(Exception):
    """The candidate process died, hung up or broke the protocol."""


# --------------------------------------------------------------------------- wire format (both sides)


_VIEW_TAGS: dict[type, str] = {type({}.keys()): "dk", type({}.values()): "dv", type({}.items()): "di"}


class TruncatedIterator:
    """The first ``ITER_CAP`` items of an iterator that had more: running past them fails the test, clearly."""

    def __init__(self, items: list[Any]) -> None:
        self.items = iter(items)

    def __iter__(self) -> TruncatedIterator:
        return self

    def __next__(self) -> Any:
        for item in self.items:
            return item
        raise RuntimeError(
            f"the iterator returned by the code under test has more than {ITER_CAP} items; "
            f"only the first {ITER_CAP} can be checked"
        )


def _view_tag(kind: type) -> str:
    """The wire tag of a dict view of the interpreter's own (an ``OrderedDict``'s too), else ``""``."""
    if kind.__flags__ & HEAP_TYPE:
        return ""
    for base, tag in _VIEW_TAGS.items():
        if issubclass(kind, base):
            return tag
    return ""


def _builtin_iterator(kind: type) -> bool:
    """An iterator of the interpreter's own (generator, map, zip, list_iterator...): its items are plain data."""
    return not (kind.__flags__ & HEAP_TYPE) and hasattr(kind, "__next__") and hasattr(kind, "__iter__")


def _take(iterator: Any, refer: Refer, depth: int) -> dict[str, Any]:
    items: list[Any] = []
    for item in iterator:
        if len(items) == ITER_CAP:
            return {"itx": items}
        items.append(encode(item, refer, depth + 1))
    return {"it": items}


def _plain_base(value: object) -> type | None:
    for base in (bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset):
        if isinstance(value, base):
            return base
    return None


def encode(value: Any, refer: Refer, depth: int = 0) -> Any:
    """A JSON-able form of ``value``; objects that are not plain data go through ``refer``."""
    if depth > DEPTH_CAP:
        raise WireError("value nested too deeply (or cyclic)")
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str or kind is float:
        return value
    if kind is list:
        return [encode(item, refer, depth + 1) for item in value]
    if kind is tuple:
        return {"t": [encode(item, refer, depth + 1) for item in value]}
    if kind is dict:
        return {"d": [[encode(k, refer, depth + 1), encode(v, refer, depth + 1)] for k, v in value.items()]}
    if kind is set or kind is frozenset:
        return {"s" if kind is set else "fs": [encode(item, refer, depth + 1) for item in value]}
    if kind is bytes or kind is bytearray:
        return {"b" if kind is bytes else "ba": bytes(value).decode("latin-1")}
    if kind is complex:
        return {"c": [value.real, value.imag]}
    if kind is range:
        return {"r": [value.start, value.stop, value.step]}
    view = _view_tag(kind)
    if view:
        return {view: [encode(item, refer, depth + 1) for item in value]}
    if _builtin_iterator(kind):
        return _take(value, refer, depth)
    base = _plain_base(value)
    if base is dict and kind.__module__ == "collections":  # Counter, OrderedDict, defaultdict: by value
        return encode(dict(dict.items(value)), refer, depth)
    if base is tuple and hasattr(kind, "_fields"):  # a named tuple: by value
        return encode(tuple(tuple.__iter__(value)), refer, depth)
    if base is not None:
        raise WireError(
            f"a {kind.__qualname__} (a subclass of {base.__name__}) cannot be checked: "
            f"return plain built-in values ({base.__name__}, not a subclass)"
        )
    return refer(value)


def decode(data: Any, resolve: Resolve, depth: int = 0) -> Any:
    """Exact built-in values from JSON-decoded ``data``; ``{"h": ...}``/``{"cb": ...}`` go through ``resolve``."""
    if depth > DEPTH_CAP:
        raise WireError("value nested too deeply")
    kind = type(data)
    if data is None or kind is bool or kind is int or kind is float or kind is str:
        return data
    if kind is list:
        return [decode(item, resolve, depth + 1) for item in data]
    if kind is not dict or len(data) != 1:
        raise WireError(f"malformed value of type {kind.__name__}")
    ((tag, body),) = data.items()
    if tag in ("h", "cb", "n"):
        return resolve(tag, body)
    if tag == "b" or tag == "ba":
        if type(body) is not str:
            raise WireError("malformed bytes")
        raw = body.encode("latin-1")
        return raw if tag == "b" else bytearray(raw)
    if type(body) is not list:
        raise WireError(f"malformed {tag!r} value")
    if tag == "c":
        if len(body) != 2 or any(type(part) not in (int, float) for part in body):
            raise WireError("malformed complex")
        return complex(body[0], body[1])
    if tag == "r":
        if len(body) != 3 or any(type(part) is not int for part in body) or body[2] == 0:
            raise WireError("malformed range")
        return range(body[0], body[1], body[2])
    items = [decode(item, resolve, depth + 1) for item in body]
    try:
        if tag == "it":
            return iter(items)
        if tag == "itx":
            return TruncatedIterator(items)
        if tag == "dk":
            return dict.fromkeys(items).keys()
        if tag == "dv":
            return dict(enumerate(items)).values()
        if tag == "di":
            if any(type(pair) is not tuple or len(pair) != 2 for pair in items):
                raise WireError("malformed dict items")
            return dict(items).items()
        if tag == "t":
            return tuple(items)
        if tag == "s":
            return set(items)
        if tag == "fs":
            return frozenset(items)
        if tag == "d":
            if any(type(pair) is not list or len(pair) != 2 for pair in items):
                raise WireError("malformed dict")
            return {key: value for key, value in items}
    except TypeError as exc:
        raise WireError(f"unhashable key or member: {exc}") from None
    raise WireError(f"unknown tag {tag!r}")


class Channel:
    """Line-delimited JSON over a pair of pipe fds, with a size cap on what is read."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.reader = os.fdopen(read_fd, "rb", buffering=65536)
        self.write_fd = write_fd

    def close(self) -> None:
        try:
            self.reader.close()
            os.close(self.write_fd)
        except OSError:
            pass

    def send(self, message: dict[str, Any]) -> None:
        data = (json_dumps(message) + "\n").encode("utf-8", "surrogatepass")
        view = memoryview(data)
        while view:
            written = os.write(self.write_fd, view)
            view = view[written:]

    def receive(self) -> dict[str, Any]:
        line = self.reader.readline(LINE_CAP + 1)
        if not line:
            raise CandidateGone("the candidate process exited or closed its pipe")
        if len(line) > LINE_CAP or not line.endswith(b"\n"):
            raise CandidateGone(f"the candidate sent a message over {LINE_CAP} bytes")
        try:
            message = json_loads(line)
        except (ValueError, RecursionError, MemoryError) as exc:
            raise CandidateGone(f"the candidate sent a malformed message: {type(exc).__name__}") from None
        if type(message) is not dict:
            raise CandidateGone("the candidate sent a malformed message")
        return message


def _describe_exception(exc: BaseException) -> dict[str, Any]:
    import traceback  # only on failure: it costs an import

    mro = [[klass.__module__, klass.__qualname__] for klass in type(exc).__mro__]
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        message = str(exc)
    except BaseException:  # a hostile __str__
        message = "<unprintable>"
    return {"mro": mro, "msg": message[:MESSAGE_CAP], "tb": text[-MESSAGE_CAP:]}


# --------------------------------------------------------------------------- candidate side


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


# --------------------------------------------------------------------------- checker side


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


def install_pipes(read_fd: int, write_fd: int) -> None:
    """In a new candidate: its pipes on fds 3 (requests) and 4 (replies), every other fd above 2 closed."""
    high_read, high_write = os.dup2(read_fd, 200), os.dup2(write_fd, 201)
    os.dup2(high_read, 3)
    os.dup2(high_write, 4)
    os.closerange(5, 1 << 16)


def spawn_fresh(workdir: str, source: str) -> tuple[Channel, int]:
    """A new candidate in a fresh interpreter (nothing of the checker's memory survives ``exec``)."""
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            install_pipes(to_child_r, from_child_w)
            flags = ["-I", "-B", "-S"] if sys.flags.no_site else ["-I", "-B"]
            os.execv(sys.executable, [sys.executable, *flags, "-c", source, "--candidate", workdir])
        finally:
            os._exit(127)
    os.close(to_child_r)
    os.close(from_child_w)
    return Channel(from_child_r, to_child_w), pid


def fork_early(workdir: str) -> tuple[Channel, int]:
    """The first candidate: forked before anything secret is read, so its memory holds none of it."""
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            install_pipes(to_child_r, from_child_w)  # closes the verdict fd and everything else
            candidate_main(3, 4, workdir)
        finally:
            os._exit(127)
    os.close(to_child_r)
    os.close(from_child_w)
    return Channel(from_child_r, to_child_w), pid


# --------------------------------------------------------------------------- verdict and running tests


class Verdict:
    def __init__(self, fd: int, nonce: str) -> None:
        self.fd, self.nonce = fd, nonce

    def write(self, record: dict[str, Any]) -> None:
        line = f"\n{MARK} {self.nonce} {json_dumps(record)}\n"
        data = line.encode("utf-8", "replace")
        while data:
            data = data[os.write(self.fd, data) :]


SOURCES: dict[str, str] = {}
"""Test file name -> text: the files are gone from disk, tracebacks read them from here."""


def short_traceback(exc: BaseException) -> str:
    import linecache
    import traceback

    for filename, text in SOURCES.items():
        linecache.cache.setdefault(filename, (len(text), None, text.splitlines(True), filename))

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    remote = getattr(exc, "candidate_traceback", "")
    if remote:
        text += "\nIn the code under test:\n" + remote
    return text[-MESSAGE_CAP:]


def run_with_limit(function: Callable[[], object], limit_s: float) -> tuple[str, str]:
    def on_alarm(_signum: int, _frame: object) -> NoReturn:
        raise TestTimeout()

    signals.signal(signals.SIGALRM, on_alarm)
    signals.setitimer(signals.ITIMER_REAL, limit_s)
    try:
        function()
        return "passed", ""
    except TestTimeout:
        return "timeout", f"the test ran longer than its limit of {limit_s:g}s"
    except AssertionError as exc:
        return "failed", short_traceback(exc)
    except BaseException as exc:
        return "error", short_traceback(exc)
    finally:
        signals.setitimer(signals.ITIMER_REAL, 0)


SHORT_LIMIT_S = 1.0
"""A test's limit once an earlier test of the same candidate has timed out (the full limit if that is shorter)."""
MIN_LIMIT_S = 0.05
"""Below this much time left, a test is reported without running (``setitimer(0)`` would mean no limit)."""


class TimeLimits:
    """The time limits of one candidate's tests: full until a test times out, then short and shared.

    A candidate that loops forever in its entry point would otherwise spend the
    full per-test limit on every test. So once a test times out, every later
    test of the candidate runs under ``min(full, SHORT_LIMIT_S)``, and the later
    tests that do not pass draw their time from one more full limit, shared:
    however many tests there are, timeouts cost a candidate at most twice the
    per-test limit. When that allowance is spent, the remaining tests are
    reported as ``timeout`` without running, and their message says why.
    Tests that pass cost nothing from it, so code that loops on one input
    still passes its other tests, unless one of them legitimately needs more
    than ``SHORT_LIMIT_S``.

    The clock lives in the checker; the code under test can only make it
    stricter (by timing out), never longer or a test passed.
    """

    def __init__(self, full_s: float) -> None:
        self.full_s = full_s
        self.short_s = min(full_s, SHORT_LIMIT_S)
        self.left_s = full_s
        self.first_timeout = ""
        """The name of the first test that timed out ("" while none has)."""

    def next_limit(self) -> float:
        """The next test's limit in seconds; 0.0 when it must not run (see ``not_run_message``)."""
        if not self.first_timeout:
            return self.full_s
        limit = min(self.short_s, self.left_s)
        return limit if limit >= MIN_LIMIT_S else 0.0

    def spent(self, name: str, outcome: str, seconds: float) -> None:
        """Account for a finished test."""
        if not self.first_timeout:
            if outcome == "timeout":
                self.first_timeout = name
        elif outcome != "passed":
            self.left_s -= seconds

    def timeout_message(self, limit_s: float) -> str:
        message = f"the test ran longer than its limit of {round(limit_s, 2):g}s"
        if self.first_timeout and limit_s < self.full_s:
            message += f" (cut from {self.full_s:g}s because {self.first_timeout} timed out earlier)"
        return message

    def not_run_message(self) -> str:
        return (
            f"not run: {self.first_timeout} timed out, and the later tests that did not pass "
            f"used up their shared {self.full_s:g}s"
        )


def solution_names(source: str) -> tuple[list[str], list[Import]]:
    """Top-level names of the solution, read from its syntax tree (it is never run here).

    Names bound inside top-level ``if``/``try``/``with``/``for``/``while`` blocks count too (a fallback
    ``def`` under ``except ImportError:``); an ``if __name__ == "__main__":`` block does not, since the
    solution is imported as ``solution``.

    ``_ast`` and ``compile(..., PyCF_ONLY_AST)`` rather than ``ast``, whose import costs milliseconds per job.
    """
    import _ast

    try:
        tree: Any = compile(source, "solution.py", "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], []
    names: list[str] = []
    imports: list[Import] = []
    blocks = (
        _ast.If,
        _ast.Try,
        getattr(_ast, "TryStar", _ast.Try),
        _ast.With,
        _ast.AsyncWith,
        _ast.For,
        _ast.AsyncFor,
        _ast.While,
    )
    statements = tree.body[::-1]  # a stack: statements pop in source order
    while statements:
        node = statements.pop()
        if isinstance(node, blocks):
            inner = [] if _is_main_guard(node) else list(node.body)
            for handler in getattr(node, "handlers", []):
                inner += handler.body
            inner += [*getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            statements += inner[::-1]
        elif isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (_ast.Assign, _ast.AnnAssign, _ast.AugAssign)):
            targets = node.targets if isinstance(node, _ast.Assign) else [node.target]
            pending = list(targets)
            while pending:
                target = pending.pop()
                if isinstance(target, _ast.Name):
                    names.append(target.id)
                elif isinstance(target, (_ast.Tuple, _ast.List)):
                    pending.extend(target.elts)
                elif isinstance(target, _ast.Starred):
                    pending.append(target.value)
        elif isinstance(node, _ast.Import):
            for alias in node.names:
                imports.append((alias.name, None, alias.asname or alias.name.partition(".")[0]))
        elif isinstance(node, _ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    imports.append((node.module, alias.name, alias.asname or alias.name))
    return names, imports


def _is_main_guard(node: Any) -> bool:
    """``if __name__ == "__main__":``."""
    import _ast

    test = node.test if isinstance(node, _ast.If) else None
    return (
        isinstance(test, _ast.Compare)
        and isinstance(test.left, _ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], _ast.Eq)
        and isinstance(test.comparators[0], _ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def checker_imports(imports: list[Import]) -> dict[str, Any]:
    """The solution's imports of standard-library modules, done here for the tests' namespace."""
    bound: dict[str, Any] = {}
    for module_name, attribute, bind_as in imports:
        if module_name.partition(".")[0] not in sys.stdlib_module_names:
            continue
        try:
            __import__(module_name)
            module = sys.modules[module_name]
            if attribute is None:
                bound[bind_as] = (
                    sys.modules[module_name.partition(".")[0]] if bind_as == module_name.partition(".")[0] else module
                )
            elif hasattr(module, attribute):
                bound[bind_as] = getattr(module, attribute)
        except Exception:
            continue
    return bound


class Session:
    """One checker run: the plan, the candidate, the namespaces to fix up after loading, and the verdict."""

    def __init__(
        self, plan: dict[str, Any], verdict: Verdict, checker: Checker, names: list[str], imported: dict[str, Any]
    ) -> None:
        self.plan = plan
        self.verdict = verdict
        self.checker = checker
        self.proxy_module = type(sys)(SOLUTION_MODULE)
        self.proxy_module.__file__ = os.path.join(checker.workdir, SOLUTION_MODULE + ".py")
        namespace = self.proxy_module.__dict__
        namespace.update(imported)
        for name in names:
            namespace[name] = Remote(checker, {"n": name})
        namespace["__getattr__"] = self.module_getattr
        self.namespaces = [namespace]
        self.light_namespace: dict[str, object] | None = None
        self.limits = TimeLimits(float(plan.get("test_timeout_s") or 10))
        self.task_names: set[str] = set()
        """Names the task defined (``define_task_names``): the candidate's names never replace them."""
        sys.modules[SOLUTION_MODULE] = self.proxy_module

    def define_task_names(self, task_code: str) -> None:
        """Run the task's own definitions (a HumanEval prompt's helpers and imports) here, over the solution's names.

        A test that uses ``poly`` or ``math`` from the task gets the task's, never a redefinition in the
        code under test; the code under test still sees its own in its own process.
        """
        namespace = self.proxy_module.__dict__
        namespace["__builtins__"] = builtins
        exec(compile(task_code, TASK_FILE, "exec"), namespace)
        self.task_names = {name for name, value in namespace.items() if not isinstance(value, Remote)}

    def module_getattr(self, name: str) -> Remote:
        if name.startswith("__"):
            raise AttributeError(name)
        return Remote(self.checker, {"n": name})

    def load_candidate(self) -> str | None:
        """Import the solution in the candidate and put its data values in place of name proxies."""
        global ACCEPTING_CALLS
        ACCEPTING_CALLS = True
        limit = float(self.plan.get("load_timeout_s") or self.plan.get("test_timeout_s") or 10)

        def load() -> None:
            self.checker.ensure_loaded()

        outcome, message = run_with_limit(load, limit)
        if outcome != "passed":
            if outcome == "timeout":  # run_with_limit's message speaks of a test
                message = f"importing the solution ran longer than its limit of {limit:g}s"
            self.checker.load_error = self.checker.load_error or message
            return message
        for name in list(self.checker.names):
            if name in self.task_names:
                continue
            if name not in self.proxy_module.__dict__:
                self.proxy_module.__dict__[name] = Remote(self.checker, {"n": name})
            if self.light_namespace is not None:  # names made at run time (globals()[...] = ...), as exec would see
                self.light_namespace.setdefault(name, Remote(self.checker, {"n": name}))
        for namespace in self.namespaces:
            for key, value in list(namespace.items()):
                if isinstance(value, Remote) and isinstance(value._dc_target, dict) and "n" in value._dc_target:
                    found = self.checker.resolved(value._dc_target["n"])
                    if found is not None:
                        namespace[key] = found[1]
        return None

    def record(self, name: str, outcome: str, duration: float, message: str, file: str = "") -> None:
        self.verdict.write(
            {"event": "result", "name": name, "file": file, "outcome": outcome,
             "duration_s": round(duration, 6), "message": message[-MESSAGE_CAP:]}
        )  # fmt: skip


def read_and_hide(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    os.unlink(path)
    return text


def run_light(session: Session, sources: list[tuple[str, str]]) -> None:
    """``test_*`` functions and HumanEval's ``check(entry_point)``, run in this process."""
    plan = session.plan
    namespace = dict(session.proxy_module.__dict__)
    namespace.pop("__getattr__", None)
    namespace["__name__"] = "test_solution"
    namespace["__builtins__"] = builtins
    session.namespaces.append(namespace)
    session.light_namespace = namespace
    tests: list[tuple[str, Callable[[], object]]] = []
    try:
        for filename, text in sources:
            SOURCES[filename] = text
            exec(compile(text, filename, "exec"), namespace)
        for name, value in list(namespace.items()):
            if name.startswith("test_") and callable(value) and not isinstance(value, Remote):
                tests.append((name, value))
        entry: Any = plan.get("entry_point")
        check = namespace.get("check")
        if entry and callable(check) and not isinstance(check, Remote):
            tests.append(("check", lambda: check(namespace[entry])))
    except BaseException as exc:
        session.verdict.write({"event": "load_error", "message": short_traceback(exc)})
        return
    load_error = session.load_candidate()
    if load_error is not None:
        session.verdict.write({"event": "load_error", "message": f"the code under test failed to load: {load_error}"})
        return
    session.verdict.write({"event": "collected", "tests": [name for name, _ in tests]})
    entry = plan.get("entry_point")
    if entry and entry not in session.checker.names:
        namespace[entry] = _missing(entry)
    limits = session.limits
    for name, test in tests:
        limit = limits.next_limit()
        if not limit:
            session.record(name, "timeout", 0.0, limits.not_run_message())
            continue
        started = time.perf_counter()
        outcome, message = run_with_limit(test, limit)
        duration = time.perf_counter() - started
        if outcome == "timeout":
            message = limits.timeout_message(limit)
        limits.spent(name, outcome, duration)
        session.record(name, outcome, duration, message)


def _missing(entry: str) -> Callable[..., NoReturn]:
    def missing(*_args: object, **_kwargs: object) -> NoReturn:
        raise NameError(f"the code defines no {entry!r}")

    return missing


def run_probes(session: Session, calls: list[str]) -> None:
    """Evaluate each call expression with the solution's names; report the value's repr as seen here."""
    load_error = session.load_candidate()
    namespace = dict(session.proxy_module.__dict__)
    namespace.pop("__getattr__", None)
    namespace["__builtins__"] = builtins
    limits = TimeLimits(float(session.plan.get("test_timeout_s") or 2))
    for call in calls:
        record: dict[str, Any] = {"event": "probe", "call": call}
        if load_error is not None:
            # The end of the traceback names the error.
            record.update(outcome="raises", expected="ImportError", message=load_error[-500:])
            session.verdict.write(record)
            continue
        limit = limits.next_limit()
        if not limit:
            record.update(outcome="timeout", expected="", message=limits.not_run_message())
            session.verdict.write(record)
            continue
        box: dict[str, Any] = {}

        def evaluate(call: str = call, box: dict[str, Any] = box) -> None:
            box["value"] = eval(call, dict(namespace))

        signals.signal(signals.SIGALRM, lambda *_: (_ for _ in ()).throw(TestTimeout()))
        started = time.perf_counter()
        signals.setitimer(signals.ITIMER_REAL, limit)
        try:
            evaluate()
            value = box["value"]
            shown = value._dc_candidate_repr() if isinstance(value, Remote) else repr(value)
            record.update(outcome="value", expected=shown[:MESSAGE_CAP])
        except TestTimeout:
            record.update(outcome="timeout", expected="", message=f"call exceeded {limit:g}s")
        except BaseException as exc:
            record.update(outcome="raises", expected=type(exc).__name__, message=str(exc)[:500])
        finally:
            signals.setitimer(signals.ITIMER_REAL, 0)
        # A value or an exception is an answer; only a timeout draws on the shared allowance.
        limits.spent(call, "timeout" if record["outcome"] == "timeout" else "passed", time.perf_counter() - started)
        session.verdict.write(record)


def run_pytest(run: Session, files: list[str]) -> None:
    """pytest modules, collected and run by pytest in this process (no conftest, no plugins from the work dir)."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ.pop("PYTEST_ADDOPTS", None)
    os.environ.pop("PYTEST_PLUGINS", None)
    import pytest

    limits = run.limits
    workdir = run.checker.workdir

    class VerdictPlugin:
        @pytest.hookimpl(tryfirst=True)
        def pytest_collection_finish(self, session: pytest.Session) -> None:
            import linecache

            for path in files:
                full = os.path.join(workdir, path)
                try:
                    text = read_and_hide(full)
                except OSError:
                    continue
                linecache.cache[full] = (len(text), None, text.splitlines(True), full)
            sys.path[:] = [entry for entry in sys.path if entry and not os.path.abspath(entry).startswith(workdir)]
            sys.path_importer_cache.clear()
            for module in list(sys.modules.values()):
                module_file = getattr(module, "__file__", None) or ""
                if module_file.startswith(workdir) and module is not run.proxy_module:
                    run.namespaces.append(module.__dict__)
            run.verdict.write(
                {"event": "collected", "tests": [item.location[2] for item in session.items],
                 "files": [item.nodeid.split("::")[0] for item in session.items]}
            )  # fmt: skip
            load_error = run.load_candidate()
            if load_error is not None:
                run.verdict.write(
                    {"event": "load_error", "message": f"the code under test failed to load: {load_error}"}
                )

        limit = 0.0
        """The limit of the test running now (0.0: it was not run)."""
        timed_out = False
        """The alarm went off during the test running now."""

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, None]:
            plugin = self
            plugin.limit, plugin.timed_out = limits.next_limit(), False
            if not plugin.limit:
                raise TestTimeout()  # before the yield: pytest reports the test failed without running it

            def on_alarm(_signum: int, _frame: object) -> NoReturn:
                plugin.timed_out = True
                raise TestTimeout()

            previous = signals.signal(signals.SIGALRM, on_alarm)
            signals.setitimer(signals.ITIMER_REAL, plugin.limit)
            try:
                yield
            finally:
                signals.setitimer(signals.ITIMER_REAL, 0)
                signals.signal(signals.SIGALRM, previous)

        def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
            if report.when == "call" or (report.when == "setup" and not report.passed):
                message = "" if report.passed else (report.longreprtext or "skipped")[-MESSAGE_CAP:]
                if report.passed:
                    outcome = "passed"
                elif report.when == "setup" or report.skipped:
                    outcome = "error"
                elif not self.limit:
                    outcome, message = "timeout", limits.not_run_message()
                elif self.timed_out:
                    outcome, message = "timeout", limits.timeout_message(self.limit)
                elif "TestTimeout" in report.longreprtext:
                    outcome = "timeout"
                elif "AssertionError" in report.longreprtext or report.longreprtext.lstrip().startswith("E"):
                    outcome = "failed" if _is_assertion(report) else "error"
                else:
                    outcome = "error"
                name = report.location[2] if report.location else report.nodeid
                if report.when == "call":
                    limits.spent(name, outcome, report.duration)
                run.record(name, outcome, report.duration, message, report.nodeid.split("::")[0])

        def pytest_collectreport(self, report: pytest.CollectReport) -> None:
            if report.failed:
                run.verdict.write(
                    {"event": "result", "name": "<collection>", "file": report.nodeid, "outcome": "error",
                     "duration_s": 0.0, "message": report.longreprtext[-MESSAGE_CAP:]}
                )  # fmt: skip

    sys.modules[SOLUTION_MODULE] = run.proxy_module
    args = [
        *files,
        "-q",
        "-p", "no:cacheprovider",
        "--noconftest",
        "--import-mode=importlib",
        "-c", os.devnull,
        "--rootdir", workdir,
        "--tb=short",
        "-o", "console_output_style=classic",
    ]  # fmt: skip
    pytest.main(args, plugins=[VerdictPlugin()])


def _is_assertion(report: pytest.TestReport) -> bool:
    excinfo = getattr(report, "longrepr", None)
    crash = getattr(getattr(excinfo, "reprcrash", None), "message", "") or ""
    return crash.startswith("AssertionError") or crash.startswith("assert ")


def add_image_paths(workdir: str) -> None:
    """``-I`` ignores PYTHONPATH; the image's (set by the host, never by the code) is added back, after the stdlib."""
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        full = os.path.abspath(entry) if entry else ""
        if full and full not in sys.path and not (full + os.sep).startswith(workdir + os.sep):
            sys.path.append(full)


def harden() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def main(argv: list[str]) -> int:
    """``_dc_check.py PLAN_FILE``: the plan names the mode, the test files and the limits."""
    workdir = os.getcwd()
    add_image_paths(workdir)
    harden()
    with open(os.path.abspath(__file__), encoding="utf-8") as handle:
        source = handle.read()
    try:
        os.unlink(COMPILED_FILE)  # read by the loader already (see debatecode.sandbox.verdict.LOADER)
    except OSError:
        pass
    with open(os.path.join(workdir, SOLUTION_MODULE + ".py"), encoding="utf-8", errors="replace") as handle:
        names, imports = solution_names(handle.read())
    imported = checker_imports(imports)  # before the fork, so the candidate inherits them instead of importing again
    first_child = fork_early(workdir)
    # From here on the candidate exists but waits for "load"; nothing secret was in memory when it forked.
    verdict_fd = os.dup(1)
    os.dup2(2, 1)  # anything printed here (pytest's report, test prints) goes to stderr, never to the verdict
    plan = json_loads(read_and_hide(argv[0]))
    nonce = read_and_hide(plan["nonce_file"]).strip()
    verdict = Verdict(verdict_fd, nonce)
    checker = Checker(workdir, source, first_child)
    session = Session(plan, verdict, checker, names, imported)
    mode = plan.get("mode")
    try:
        task_error = None
        if plan.get("task_file"):
            try:
                session.define_task_names(read_and_hide(plan["task_file"]))
            except BaseException as exc:
                task_error = short_traceback(exc)
        if task_error is not None:
            verdict.write({"event": "load_error", "message": "the task's own definitions failed to run here "
                           f"(a problem of the task, not of the code under test): {task_error}"})  # fmt: skip
        elif mode == "pytest":
            run_pytest(session, list(plan.get("files") or []))
        elif mode == "probe":
            calls = json_loads(read_and_hide(plan["calls_file"]))
            run_probes(session, [str(call) for call in calls])
        else:
            sources = [(name, read_and_hide(name)) for name in plan.get("files") or []]
            run_light(session, sources)
    except BaseException as exc:
        verdict.write({"event": "checker_error", "message": short_traceback(exc)})
    finally:
        checker.kill()
    verdict.write({"event": "done"})
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--candidate"]:
        candidate_main(3, 4, sys.argv[2])
    sys.exit(main(sys.argv[1:]))
