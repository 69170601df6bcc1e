"""A real server for tests that need one: uvicorn on a free loopback port, in a thread."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx

__all__ = ["serving"]


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port in a thread; yields its base URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="dashboard-uvicorn", daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base}/v1/health", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, "uvicorn did not answer /v1/health within 30 s"
            time.sleep(0.05)
        yield base
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
