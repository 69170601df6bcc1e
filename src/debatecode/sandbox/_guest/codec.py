"""The checker's wire format, shared by both of its processes: plain data as JSON, over a pair of pipes. Stdlib only.

The first part of the checker (``checker.py`` describes the whole): the host joins
``codec.py``, ``candidate.py``, ``remote.py``, ``modes.py`` and ``checker.py``, in
that order, into one file (``debatecode.sandbox.wire.checker_source``) and sends it
into the job as ``_dc_check.py``. The later parts use the names of the earlier ones.

What crosses from the candidate is plain data only: None, bool, int, float,
str, bytes, complex and lists, tuples, dicts, sets and frozensets of them,
decoded here from JSON into exact built-in types. Subclasses of built-ins are
refused (a few ``collections`` types and named tuples are converted to their
base type by value). Any other object stays in the candidate and is reached
through a handle (``encode``'s ``refer``).
"""

from __future__ import annotations

import _json
import os

# Annotations only: ``typing`` is never imported when the checker runs (mypy treats this name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeAlias

    Refer: TypeAlias = Callable[[Any], Any]
    """Turns an object that is not plain data into its wire form (a handle or a callback id)."""
    Resolve: TypeAlias = Callable[[str, Any], Any]
    """Turns a handle, callback or name tag and its body back into an object."""
    Import: TypeAlias = tuple[str, str | None, str]
    """(module, attribute or None for ``import module``, the name it is bound to)."""

LINE_CAP = 8 * 1024 * 1024
"""Largest message accepted from the candidate, in bytes."""
OUT_CAP = 64 * 1024
"""Candidate stdout kept per call."""
MESSAGE_CAP = 2000
DEPTH_CAP = 100
SOLUTION_MODULE = "solution"
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
