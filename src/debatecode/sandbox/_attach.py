"""A raw, asynchronous attach connection to a container's stdin, stdout and stderr.

Warm containers talk to the host over their standard streams. The Docker SDK
can only hand out the attach socket through private attributes, so this module
speaks the engine's small upgrade handshake itself, over asyncio streams: no
worker thread per job and no private SDK state. It supports engines on a unix
socket and on plain TCP; anything else (TLS, ssh) raises ``AttachUnsupported``
and the sandbox runs every job in a fresh container instead.

With ``tty`` off, the engine multiplexes stdout and stderr into frames: an
8-byte header (stream type, three zero bytes, big-endian payload length), then
the payload. ``AttachedStream`` splits them and keeps stdout as lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from urllib.parse import urlparse

__all__ = [
    "AttachError",
    "AttachUnsupported",
    "AttachedStream",
    "Attacher",
    "StreamClosed",
    "engine_attacher",
]

STDERR_TAIL_BYTES = 4096
_HANDSHAKE_LIMIT = 64 * 1024


class AttachError(Exception):
    """The attach connection failed (handshake refused, malformed frame, line over its cap)."""


class AttachUnsupported(AttachError):
    """The engine address is neither a unix socket nor plain TCP."""


class StreamClosed(AttachError):
    """The container closed its output: it exited, or was killed or removed."""


class AttachedStream:
    """One container's multiplexed output, read as stdout lines, and its stdin."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._stdout = bytearray()
        self._stderr_tail = bytearray()
        self.closed = False

    async def send(self, data: bytes) -> None:
        """Write ``data`` to the container's stdin.

        Raises:
            StreamClosed: the connection is gone.
        """
        if self.closed:
            raise StreamClosed("the attach connection is closed")
        try:
            self._writer.write(data)
            await self._writer.drain()
        except (ConnectionError, OSError) as exc:
            self.closed = True
            raise StreamClosed(f"cannot write to the container: {exc}") from exc

    async def read_line(self, cap: int) -> bytes:
        """The next stdout line, without its newline.

        Raises:
            StreamClosed: the output ended before a whole line arrived.
            AttachError: the line grew past ``cap`` bytes, or a frame is malformed.
        """
        while True:
            newline = self._stdout.find(b"\n")
            if newline >= 0:
                line = bytes(self._stdout[:newline])
                del self._stdout[: newline + 1]
                return line
            if len(self._stdout) > cap:
                raise AttachError(f"the container's output line exceeded {cap} bytes")
            await self._read_frame()

    async def _read_frame(self) -> None:
        try:
            header = await self._reader.readexactly(8)
            kind, size = header[0], int.from_bytes(header[4:8], "big")
            payload = await self._reader.readexactly(size)
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
            self.closed = True
            raise StreamClosed("the container's output ended") from exc
        if kind == 1:
            self._stdout += payload
        elif kind == 2:
            self._stderr_tail = (self._stderr_tail + payload)[-STDERR_TAIL_BYTES:]
        elif kind != 0:
            self.closed = True
            raise AttachError(f"malformed attach frame (stream type {kind})")

    def stderr_tail(self) -> str:
        """The last few KiB the container's main process wrote to stderr."""
        return bytes(self._stderr_tail).decode("utf-8", errors="replace")

    def close(self) -> None:
        """Close the connection; a container started with ``stdin_once`` then sees end of input."""
        self.closed = True
        with contextlib.suppress(RuntimeError, OSError):
            self._writer.close()


Attacher = Callable[[str], Awaitable[AttachedStream]]
"""Opens an ``AttachedStream`` to a container id."""


def engine_attacher(address: str, api_version: str) -> Attacher:
    """An ``Attacher`` for the engine at ``address`` (``unix://...`` or ``tcp://host:port``).

    Raises:
        AttachUnsupported: TLS (``DOCKER_TLS_VERIFY``) or another scheme (ssh, npipe).
    """
    parsed = urlparse(address)
    if parsed.scheme in ("tcp", "http") and not os.environ.get("DOCKER_TLS_VERIFY"):
        host, port = parsed.hostname or "localhost", parsed.port or 2375

        def connect() -> Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
            return asyncio.open_connection(host, port, limit=_HANDSHAKE_LIMIT)

    elif parsed.scheme in ("unix", "http+unix", ""):
        path = parsed.path or address

        def connect() -> Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
            return asyncio.open_unix_connection(path, limit=_HANDSHAKE_LIMIT)

    else:
        raise AttachUnsupported(f"warm containers need a unix-socket or plain-TCP engine, not {address!r}")

    async def attach(container_id: str) -> AttachedStream:
        try:
            reader, writer = await connect()
        except OSError as exc:
            raise AttachError(f"cannot connect to the Docker engine at {address}: {exc}") from exc
        request = (
            f"POST /v{api_version}/containers/{container_id}/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1\r\n"
            "Host: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n"
        )
        try:
            writer.write(request.encode("ascii"))
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, OSError) as exc:
            writer.close()
            raise AttachError(f"the engine dropped the attach request: {exc}") from exc
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        if status.split()[1:2] not in (["101"], ["200"]):
            writer.close()
            raise AttachError(f"the engine refused to attach to {container_id[:12]}: {status}")
        return AttachedStream(reader, writer)

    return attach
