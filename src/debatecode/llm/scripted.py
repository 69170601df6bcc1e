"""Deterministic models for tests: ``scripted/<name>`` and ``scripted:<file.yaml>``.

A ``ScriptedModel`` answers through the same ``LLMClient`` as a real model.
It holds a list of replies, each optionally filtered on the call's tags
(``agent``, ``phase``, ``round``, ``kind``, ``role``). The first unused reply
whose filters all match wins; then ``fn`` (a function of the messages and
tags), then ``default``; otherwise the call raises ``ScriptExhausted``.

A reply may instead simulate a failure (``ScriptedReply(raise_error="rate_limit")``),
so tests can drive the client's retries and the engine's error handling.

Both kinds of model string are providers (``debatecode.llm.providers``):
``scripted`` and ``scripted_file``, registered here.

This module never imports litellm.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import yaml

from debatecode.errors import (
    ModelAuthError,
    ModelRequestError,
    ModelTransientError,
    ModelUnreachable,
    ScriptExhausted,
    UnknownModelError,
)
from debatecode.input_files import MAX_SCRIPT_BYTES, InputFileError, read_input_file
from debatecode.llm.providers import known_prefixes, register_provider
from debatecode.llm.transport import CompletionRequest, RawCompletion
from debatecode.llm.types import Message

__all__ = [
    "SCRIPT_KEYS",
    "ScriptFileError",
    "ScriptFileTransport",
    "ScriptedError",
    "ScriptedModel",
    "ScriptedReply",
    "ScriptedTransport",
    "load_script_file",
    "load_script_or_raise",
    "lookup_scripted",
    "register_scripted",
    "registered_or_raise",
    "registered_scripted",
    "unregister_scripted",
]


ScriptedError = Literal["rate_limit", "server_error", "timeout", "unreachable", "auth", "bad_request"]
"""Failures a scripted reply can simulate. The first three are retried by the client."""

_FILTERS = ("agent", "phase", "round", "kind", "role")
SCRIPT_KEYS = ("content", *_FILTERS, "error", "delay")
"""Keys allowed in one reply of a ``scripted:<file.yaml>`` script."""


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted reply, used at most once, with optional tag filters.

    A filter left as ``None`` matches anything; a set filter matches when the
    call's tag of that name equals it (compared as strings, so ``round=0``
    matches the tag ``"0"``).
    """

    content: str = ""
    agent: str | None = None
    phase: str | None = None
    round: str | int | None = None
    kind: str | None = None
    role: str | None = None
    raise_error: ScriptedError | None = None
    delay_s: float = 0.0
    """Seconds to wait before answering (to simulate slow models, e.g. to kill a run mid-round)."""

    def matches(self, tags: Mapping[str, str]) -> bool:
        """Whether every filter set on this reply equals the call's tag."""
        for name in _FILTERS:
            wanted = getattr(self, name)
            if wanted is not None and tags.get(name) != str(wanted):
                return False
        return True


ReplyFunction = Callable[[list[Message], dict[str, str]], str]
"""``fn(messages, tags) -> reply`` for replies computed from the call."""


class ScriptedModel:
    """A deterministic model: scripted replies, then ``fn``, then ``default``.

    Safe to share between threads and concurrent tasks: choosing and consuming
    a reply happens under a lock.
    """

    def __init__(
        self,
        replies: list[str | ScriptedReply] | None = None,
        fn: ReplyFunction | None = None,
        default: str | None = None,
    ) -> None:
        self._replies = [r if isinstance(r, ScriptedReply) else ScriptedReply(content=r) for r in replies or []]
        self._used = [False] * len(self._replies)
        self._fn = fn
        self._default = default
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return self._used.count(False)

    def reset(self) -> None:
        """Mark every scripted reply unused again."""
        with self._lock:
            self._used = [False] * len(self._replies)

    def reply(self, messages: list[Message], tags: Mapping[str, str], *, model: str = "scripted") -> str:
        """The reply to one call (see ``choose``).

        Raises:
            ScriptExhausted, ModelError: as ``choose``.
        """
        text, _delay, error = self.choose(messages, tags, model=model)
        if error is not None:
            raise error
        return text

    def choose(
        self, messages: list[Message], tags: Mapping[str, str], *, model: str = "scripted"
    ) -> tuple[str, float, Exception | None]:
        """The reply to one call, how many seconds to wait before giving it, and the failure to raise instead (if any).

        Raises:
            ScriptExhausted: no unused reply matches, and there is neither ``fn`` nor ``default``.
            ModelTransientError: the chosen reply simulates ``rate_limit``, ``server_error`` or ``timeout``.
            ModelUnreachable: the chosen reply simulates ``unreachable``.
            ModelAuthError: the chosen reply simulates ``auth``.
            ModelRequestError: the chosen reply simulates ``bad_request``.
        """
        chosen: ScriptedReply | None = None
        with self._lock:
            for index, candidate in enumerate(self._replies):
                if not self._used[index] and candidate.matches(tags):
                    self._used[index] = True
                    chosen = candidate
                    break
        if chosen is not None:
            if chosen.raise_error is not None:
                return "", chosen.delay_s, _simulated_error(chosen.raise_error, model)
            return chosen.content, chosen.delay_s, None
        if self._fn is not None:
            return self._fn(list(messages), dict(tags)), 0.0, None
        if self._default is not None:
            return self._default, 0.0, None
        shown = ", ".join(f"{k}={v}" for k, v in sorted(tags.items())) or "no tags"
        raise ScriptExhausted(
            f"scripted model {model!r} has no unused reply matching ({shown}); "
            f"{len(self._replies)} scripted, none left that match. Add a reply, a `default` or a `fn`.",
            model=model,
        )


def _simulated_error(kind: ScriptedError, model: str) -> Exception:
    message = f"scripted failure {kind!r} from {model!r}"
    if kind == "rate_limit":
        return ModelTransientError(message, model=model, reason="rate_limit")
    if kind == "server_error":
        return ModelTransientError(message, model=model, reason="server_error")
    if kind == "timeout":
        return ModelTransientError(message, model=model, reason="timeout")
    if kind == "unreachable":
        return ModelUnreachable(message, model=model)
    if kind == "auth":
        return ModelAuthError(message, model=model)
    return ModelRequestError(message, model=model)


_registry: dict[str, ScriptedModel] = {}
_registry_lock = threading.Lock()


def register_scripted(name: str, model: ScriptedModel) -> None:
    """Make ``model`` answer to ``scripted/<name>``, replacing any earlier one of that name.

    Raises:
        ValueError: ``name`` is empty or contains ``/``.
    """
    if not name or "/" in name:
        raise ValueError(f"scripted model name must be non-empty and contain no '/': {name!r}")
    with _registry_lock:
        _registry[name] = model


def unregister_scripted(name: str) -> None:
    """Forget ``scripted/<name>``; a no-op when it is not registered."""
    with _registry_lock:
        _registry.pop(name, None)


def registered_scripted() -> list[str]:
    """Names registered with ``register_scripted``, sorted."""
    with _registry_lock:
        return sorted(_registry)


def lookup_scripted(name: str) -> ScriptedModel | None:
    """The model registered as ``scripted/<name>``, or None."""
    with _registry_lock:
        return _registry.get(name)


# --- scripted:<file.yaml> ----------------------------------------------------------------------


class _LineLoader(yaml.SafeLoader):
    """A safe loader that remembers the line of every mapping, for error messages."""


def _construct_mapping_with_line(loader: _LineLoader, node: yaml.MappingNode) -> dict[str, Any]:
    mapping = {str(key): value for key, value in loader.construct_mapping(node, deep=True).items()}
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping_with_line)


class ScriptFileError(ValueError):
    """A ``scripted:<file.yaml>`` script is missing or malformed.

    ``validate_model`` turns it into ``UnknownModelError``; the message names the file and line.
    """

    def __init__(self, path: Path, detail: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.detail = detail
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {detail}")


def load_script_file(path: Path | str) -> ScriptedModel:
    """Build a ``ScriptedModel`` from a YAML script (format in ``docs/models.md``).

    Raises:
        ScriptFileError: the file is missing, is not UTF-8 or not valid YAML, or does not
            follow the format; the message names the file, the line and the offending key.
    """
    file = Path(path)
    try:
        text = read_input_file(file, max_bytes=MAX_SCRIPT_BYTES, what="script file").decode("utf-8")
    except InputFileError as exc:
        raise ScriptFileError(file, "script file not found" if exc.problem == "missing" else exc.reason) from None
    except UnicodeDecodeError as exc:
        raise ScriptFileError(
            file, f"not a YAML text file: not valid UTF-8 ({exc.reason} at byte {exc.start}); save it as UTF-8 YAML"
        ) from exc
    try:
        data = yaml.load(text, Loader=_LineLoader)  # a SafeLoader subclass: plain data only
    except RecursionError as exc:
        raise ScriptFileError(file, "invalid YAML: nested too deeply") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScriptFileError(file, f"invalid YAML: {problem}", mark.line + 1 if mark is not None else None) from exc
    if not isinstance(data, dict) or not isinstance(data.get("replies", []), list):
        raise ScriptFileError(file, "expected a mapping with a `replies:` list and an optional `default:` string")
    unknown_top = sorted(set(data) - {"replies", "default", "__line__"})
    if unknown_top:
        raise ScriptFileError(file, f"unknown top-level key(s) {unknown_top}; allowed: replies, default")
    default = data.get("default")
    if default is not None and not isinstance(default, str):
        raise ScriptFileError(file, "`default` must be a string")
    replies: list[str | ScriptedReply] = [
        _reply_from_yaml(file, item, index) for index, item in enumerate(data.get("replies") or [])
    ]
    return ScriptedModel(replies=replies, default=default)


def _reply_from_yaml(file: Path, item: object, index: int) -> ScriptedReply:
    if isinstance(item, str):
        return ScriptedReply(content=item)
    if not isinstance(item, dict):
        raise ScriptFileError(file, f"replies[{index}] must be a string or a mapping with `content:`")
    line = item.pop("__line__", None)

    def fail(detail: str) -> ScriptFileError:
        return ScriptFileError(file, f"replies[{index}]{detail}", line)

    unknown = sorted(set(item) - set(SCRIPT_KEYS))
    if unknown:
        raise fail(f" has unknown key(s) {unknown}; allowed: {', '.join(SCRIPT_KEYS)}")
    error = item.get("error")
    if error is not None and error not in get_args(ScriptedError):
        raise fail(f".error must be one of {', '.join(get_args(ScriptedError))}, got {error!r}")
    delay = item.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or delay < 0:
        raise fail(f".delay must be a number of seconds >= 0, got {delay!r}")
    content = item.get("content")
    if content is None and error is None:
        raise fail(" needs `content:` (or `error:`)")
    if content is not None and not isinstance(content, str):
        raise fail(".content must be a string")
    filters: dict[str, str | None] = {}
    for name in _FILTERS:
        value = item.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
            raise fail(f".{name} must be a string or an integer")
        filters[name] = None if value is None else str(value)
    return ScriptedReply(
        content=content or "",
        agent=filters["agent"],
        phase=filters["phase"],
        round=filters["round"],
        kind=filters["kind"],
        role=filters["role"],
        raise_error=error,
        delay_s=float(delay),
    )


# --- the providers ------------------------------------------------------------------------------


def registered_or_raise(model: str, name: str) -> ScriptedModel:
    """The model registered as ``scripted/<name>``.

    Raises:
        UnknownModelError: none is registered under ``name``; the message lists the registered names.
    """
    scripted = lookup_scripted(name)
    if scripted is None:
        names = ", ".join(registered_scripted()) or "none"
        raise UnknownModelError(
            model, known_prefixes(), f"no scripted model registered as {name!r}; registered: {names}"
        )
    return scripted


def load_script_or_raise(model: str, path: Path) -> ScriptedModel:
    """``load_script_file``, with its errors as ``UnknownModelError`` for ``model``.

    Raises:
        UnknownModelError: the file is missing or malformed; the message names the file and line.
    """
    try:
        return load_script_file(path)
    except ScriptFileError as exc:
        raise UnknownModelError(model, known_prefixes(), str(exc)) from exc


async def _answer(scripted: ScriptedModel, request: CompletionRequest) -> RawCompletion:
    text, delay, error = scripted.choose(request.messages, request.tags, model=request.model)
    if delay:
        await asyncio.sleep(delay)
    if error is not None:
        raise error
    return RawCompletion(text=text)


@register_provider("scripted", prefix="scripted/")
class ScriptedTransport:
    """Provider ``scripted``: answers ``scripted/<name>`` with the model registered under ``<name>``."""

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        """Answer one request (the registration is looked up on every call).

        Raises:
            UnknownModelError: nothing is registered under the name.
            ScriptExhausted, ModelError: as ``ScriptedModel.choose``.
        """
        return await _answer(registered_or_raise(request.model, request.resolved.name), request)


def _needs_path(path: str) -> str | None:
    return None if path else "`scripted:` needs a YAML file path"


@register_provider("scripted_file", prefix="scripted:", label="scripted", check=_needs_path)
class ScriptFileTransport:
    """Provider ``scripted_file``: answers ``scripted:<file.yaml>``.

    Each file is loaded once per transport (so once per client) and keeps its reply state there.
    """

    def __init__(self) -> None:
        self._scripts: dict[Path, ScriptedModel] = {}
        self._lock = threading.Lock()

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        """Answer one request from the script file named by the model string.

        Raises:
            UnknownModelError: the file is missing or malformed.
            ScriptExhausted, ModelError: as ``ScriptedModel.choose``.
        """
        return await _answer(self._script(request.model, Path(request.resolved.name)), request)

    def _script(self, model: str, path: Path) -> ScriptedModel:
        key = path.resolve()
        with self._lock:
            if key not in self._scripts:
                self._scripts[key] = load_script_or_raise(model, path)
            return self._scripts[key]

    async def aclose(self) -> None:
        """Forget the loaded scripts (a later call replays a file from the start)."""
        with self._lock:
            self._scripts.clear()
