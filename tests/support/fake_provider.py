"""A fake OpenAI-compatible provider on 127.0.0.1 that misbehaves on cue.

``FakeProvider`` serves ``POST /v1/chat/completions`` from a thread of the test
process (stdlib ``http.server``, so it starts in milliseconds and a CLI
subprocess can reach it too). Each request takes the next ``Behaviour`` of its
queue, or the ``default`` once the queue is empty::

    with FakeProvider(default=answer("ok")) as fake:
        fake.enqueue(status(429, retry_after=0.2), status(503), answer("done", prompt_tokens=7))
        settings = LLMSettings(api_base=fake.api_base, max_retries=3, retry_base_delay_s=0.01)
        reply = await LLMClient(settings).complete("openai/fake", messages)

Behaviours: a normal ``answer`` (with a ``usage`` block; its text may be a
function of the request), an HTTP ``status`` (optionally with ``Retry-After``),
``hang`` (sleeps past the client's timeout), ``truncated_body`` (a
``Content-Length`` the body never reaches), ``truncated_stream`` (a chunked or
SSE reply cut before its end), ``malformed_json`` and ``empty_choices``.
Every request is logged in ``requests`` with the time it arrived.

``python -m tests.support.fake_provider`` runs it as a process of its own
that another process drives over stdin (``main``); the challenges do that.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

__all__ = [
    "Behaviour",
    "FakeProvider",
    "ReceivedRequest",
    "answer",
    "empty_choices",
    "hang",
    "malformed_json",
    "status",
    "truncated_body",
    "truncated_stream",
]

BehaviourKind = Literal[
    "answer", "status", "hang", "truncated_body", "truncated_stream", "malformed_json", "empty_choices"
]
Reply = str | Callable[[dict[str, Any]], str]
"""An answer's text, or a function of the request body that returns it."""


@dataclass(frozen=True)
class Behaviour:
    """What the fake provider does with one request."""

    kind: BehaviourKind
    text: Reply = "ok"
    prompt_tokens: int = 11
    completion_tokens: int = 7
    status_code: int = 200
    retry_after: str | None = None
    """The ``Retry-After`` header sent with a ``status`` reply, verbatim (seconds or an HTTP date)."""
    seconds: float = 0.0
    """How long ``hang`` sleeps before answering (it is cut short when the server closes)."""


def answer(text: Reply = "ok", *, prompt_tokens: int = 11, completion_tokens: int = 7) -> Behaviour:
    """A normal chat completion whose ``usage`` block reports these token counts."""
    return Behaviour("answer", text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)


def status(code: int, *, retry_after: float | str | None = None) -> Behaviour:
    """An HTTP error ``code`` with an OpenAI-style error body, and ``Retry-After`` when given."""
    header = None if retry_after is None else (retry_after if isinstance(retry_after, str) else f"{retry_after:g}")
    return Behaviour("status", status_code=code, retry_after=header)


def hang(seconds: float) -> Behaviour:
    """Sleep ``seconds`` (past the client's request timeout), then answer ``ok``."""
    return Behaviour("hang", seconds=seconds)


def truncated_body() -> Behaviour:
    """Promise a ``Content-Length`` of a whole completion, send half of it, and close the connection."""
    return Behaviour("truncated_body")


def truncated_stream() -> Behaviour:
    """A chunked reply (or an SSE stream, when the request asks to stream) cut off before its last chunk."""
    return Behaviour("truncated_stream")


def malformed_json() -> Behaviour:
    """A 200 reply, declared ``application/json``, whose body is not JSON."""
    return Behaviour("malformed_json")


def empty_choices() -> Behaviour:
    """A well-formed completion with ``"choices": []`` (and a usage block)."""
    return Behaviour("empty_choices")


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the fake provider received it."""

    at: float
    """``time.monotonic()`` when it arrived."""
    path: str
    body: dict[str, Any]
    behaviour: Behaviour


@dataclass
class _State:
    default: Behaviour
    queue: deque[Behaviour] = field(default_factory=deque)
    requests: list[ReceivedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)

    def take(self, path: str, body: dict[str, Any]) -> Behaviour:
        with self.lock:
            behaviour = self.queue.popleft() if self.queue else self.default
            self.requests.append(ReceivedRequest(time.monotonic(), path, body, behaviour))
            return behaviour


class _QuietServer(ThreadingHTTPServer):
    """Serves each request in a daemon thread; a client hanging up (timeouts, process exit) is not an error."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeProvider:
    """An OpenAI-compatible server on 127.0.0.1 (a free port) that plays queued behaviours.

    Use it as a context manager; ``api_base`` is what ``llm.api_base`` (or
    ``DEBATECODE_LLM__API_BASE``) should be set to.
    """

    def __init__(self, default: Behaviour | None = None) -> None:
        self._state = _State(default=default or answer())
        self._server = _QuietServer(("127.0.0.1", 0), _handler_for(self._state))
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-provider", daemon=True)

    @property
    def api_base(self) -> str:
        """The base URL to hand to litellm: ``http://127.0.0.1:<port>/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request received so far, in order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def default(self) -> Behaviour:
        """The behaviour once the queue is empty."""
        return self._state.default

    @default.setter
    def default(self, behaviour: Behaviour) -> None:
        with self._state.lock:
            self._state.default = behaviour

    def enqueue(self, *behaviours: Behaviour) -> None:
        """Play these behaviours, in order, for the next requests."""
        with self._state.lock:
            self._state.queue.extend(behaviours)

    def start(self) -> FakeProvider:
        """Start serving in a daemon thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake any hanging request and free the port."""
        self._state.closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _completion(body: dict[str, Any], behaviour: Behaviour) -> dict[str, Any]:
    text = behaviour.text(body) if callable(behaviour.text) else behaviour.text
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "fake")),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop", "logprobs": None}
        ],
        "usage": {
            "prompt_tokens": behaviour.prompt_tokens,
            "completion_tokens": behaviour.completion_tokens,
            "total_tokens": behaviour.prompt_tokens + behaviour.completion_tokens,
        },
    }


def _handler_for(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read ``requests`` instead
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: dict[str, Any] = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            try:
                self._play(state.take(self.path, body), body)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up first (a timeout): nothing to tell it

        def _play(self, behaviour: Behaviour, body: dict[str, Any]) -> None:
            if behaviour.kind == "answer":
                self._send_json(200, _completion(body, behaviour))
            elif behaviour.kind == "status":
                headers = {"Retry-After": behaviour.retry_after} if behaviour.retry_after is not None else {}
                error = {"message": f"fake provider error {behaviour.status_code}", "type": "fake_fault"}
                self._send_json(behaviour.status_code, {"error": error}, headers)
            elif behaviour.kind == "hang":
                state.closing.wait(behaviour.seconds)
                self._send_json(200, _completion(body, answer()))
            elif behaviour.kind == "truncated_body":
                payload = json.dumps(_completion(body, answer())).encode()
                self._send_head(200, "application/json", {"Content-Length": str(len(payload))})
                self._cut(payload[: len(payload) // 2])
            elif behaviour.kind == "truncated_stream":
                self._truncated_stream(body)
            elif behaviour.kind == "malformed_json":
                self._send_raw(200, "application/json", b'{"id": "chatcmpl-fake", "choices": [{"index": 0, "mess')
            else:  # empty_choices
                self._send_json(200, _completion(body, answer()) | {"choices": []})

        def _truncated_stream(self, body: dict[str, Any]) -> None:
            if body.get("stream"):
                chunk = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": str(body.get("model", "fake")),
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": "par"}, "finish_reason": None}],
                }
                self._send_head(200, "text/event-stream", {"Transfer-Encoding": "chunked"})
                event = f"data: {json.dumps(chunk)}\n\n".encode()
                self._cut(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                return
            payload = json.dumps(_completion(body, answer())).encode()
            self._send_head(200, "application/json", {"Transfer-Encoding": "chunked"})
            half = payload[: len(payload) // 2]
            self._cut(f"{len(half):x}\r\n".encode() + half + b"\r\n")  # no terminating 0-chunk

        def _send_json(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self._send_raw(code, "application/json", json.dumps(payload).encode(), headers)

        def _send_raw(self, code: int, content_type: str, data: bytes, headers: dict[str, str] | None = None) -> None:
            self._send_head(code, content_type, {"Content-Length": str(len(data)), **(headers or {})})
            self.wfile.write(data)
            self.wfile.flush()

        def _send_head(self, code: int, content_type: str, headers: dict[str, str]) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()

        def _cut(self, data: bytes) -> None:
            """Send ``data``, then drop the connection mid-reply."""
            self.wfile.write(data)
            self.wfile.flush()
            self.close_connection = True

    return Handler


# --- as a process: ``python -m tests.support.fake_provider`` -------------------------------------------------

_FAULT_WORDS: dict[str, Callable[[], Behaviour]] = {
    "truncated_body": truncated_body,
    "truncated_stream": truncated_stream,
    "malformed_json": malformed_json,
    "empty_choices": empty_choices,
}


def _slow_reply(text: str, delay: float) -> Reply:
    """``text``, written ``delay`` seconds after the request arrived (a slow model, not a timeout)."""

    def reply(body: dict[str, Any]) -> str:
        time.sleep(delay)
        return text

    return reply if delay > 0 else text


def parse_behaviour(word: str, reply: Reply) -> Behaviour:
    """A behaviour from its word on the control channel.

    ``answer`` (with ``reply``), an HTTP status such as ``503``, or ``429/0.5``
    (with ``Retry-After: 0.5``), ``hang/SECONDS``, ``truncated_body``,
    ``truncated_stream``, ``malformed_json`` or ``empty_choices``.

    Raises:
        ValueError: the word is none of these.
    """
    head, _, arg = word.partition("/")
    if head == "answer" and not arg:
        return answer(reply)
    if head == "hang" and arg:
        return hang(float(arg))
    if head in _FAULT_WORDS and not arg:
        return _FAULT_WORDS[head]()
    if head.isdigit() and len(head) == 3:
        return status(int(head), retry_after=float(arg) if arg else None)
    raise ValueError(
        f"unknown behaviour {word!r}: answer, an HTTP status (503, 429/0.5), hang/S or {sorted(_FAULT_WORDS)}"
    )


def _command(provider: FakeProvider, line: str, reply: Reply) -> str:
    """Carry out one control line and return its one-line answer."""
    line = line.strip()
    verb, *words = line.split()
    if verb == "enqueue" and words:
        provider.enqueue(*(parse_behaviour(word, reply) for word in words))
        return "ok"
    if verb == "default" and len(words) == 1:
        provider.default = parse_behaviour(words[0], reply)
        return "ok"
    if verb == "requests" and not words:
        seen = [{"at": r.at, "kind": r.behaviour.kind, "status": r.behaviour.status_code} for r in provider.requests]
        return json.dumps(seen)
    raise ValueError(f"unknown command {line!r}: enqueue B..., default B, requests or quit")


def main(argv: list[str] | None = None) -> None:
    """Serve as a process that other processes drive over stdin, one command a line.

    The first line on stdout is the ``api_base``. Then each command on stdin
    gets one line back: ``enqueue B...`` and ``default B`` answer ``ok``,
    ``requests`` answers a JSON list of ``{"at", "kind", "status"}`` (one per
    request so far), a bad command answers ``error: ...``. ``quit`` or the end
    of stdin stops the server. ``B`` is a behaviour word (``parse_behaviour``).
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.support.fake_provider", description=main.__doc__)
    parser.add_argument("--reply-file", type=argparse.FileType(encoding="utf-8"), help="text of every answer")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds each answer takes to write")
    parser.add_argument("--default", default="answer", help="behaviour once the queue is empty")
    args = parser.parse_args(argv)
    reply = _slow_reply(args.reply_file.read() if args.reply_file else "ok", args.delay)
    with FakeProvider(default=parse_behaviour(args.default, reply)) as provider:
        print(provider.api_base, flush=True)
        for line in sys.stdin:
            if line.strip() == "quit":
                break
            if not line.strip():
                continue
            try:
                print(_command(provider, line, reply), flush=True)
            except ValueError as exc:
                print(f"error: {exc}", flush=True)


if __name__ == "__main__":
    main()
