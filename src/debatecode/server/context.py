"""What every route of the server shares: the options it was started with, the store, and the running sessions."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

# At run time, not only for type checkers: FastAPI reads this annotation to inject the request.
from starlette.requests import Request

if TYPE_CHECKING:
    from debatecode.config import DebateConfig
    from debatecode.memory import EpisodicMemory
    from debatecode.server.runs import SessionManager
    from debatecode.store.repository import SessionStore

__all__ = ["ServerContext", "ServerOptions", "context_of"]


@dataclass(frozen=True)
class ServerOptions:
    """How ``debatecode serve`` was started."""

    config: DebateConfig
    """The base config of every session the server starts (``debatecode.toml``, then ``DEBATECODE_*``)."""
    data_dir: Path
    """Where sessions started through the server keep their output folders (``<data_dir>/runs/<id>``)."""
    token: str | None = None
    """When set, every request must carry it (``Authorization: Bearer``, the ``debatecode_token`` cookie, or ``?token=``)."""
    bench_dirs: tuple[Path, ...] = field(default_factory=tuple)
    """Folders holding ``bench humaneval`` / ``sweep`` result folders, shown on the benchmark pages."""
    poll_s: float = 1.0
    """How often an event stream looks at the store for events of sessions run by another process."""
    root: Path = field(default_factory=lambda: Path.cwd().resolve())
    """The server's working folder: a ``task_path`` names a file under it, and error messages name paths relative to it."""


@dataclass
class ServerContext:
    """The server's shared state, at ``app.state.ctx``."""

    options: ServerOptions
    store: SessionStore
    manager: SessionManager
    _memory: EpisodicMemory | None = None
    _memory_lock: threading.Lock = field(default_factory=threading.Lock)

    def memory(self) -> EpisodicMemory:
        """The episodic memory of the store, opened on first use and kept (its embedder loads once)."""
        from debatecode.memory import EpisodicMemory

        with self._memory_lock:
            if self._memory is None:
                self._memory = EpisodicMemory(self.options.config.store_url, self.options.config.memory)
            return self._memory

    def close(self) -> None:
        """Close the store and the memory."""
        with self._memory_lock:
            if self._memory is not None:
                self._memory.close()
                self._memory = None
        self.store.close()


def context_of(request: Request) -> ServerContext:
    """The ``ServerContext`` of the app serving ``request``."""
    ctx: ServerContext = request.app.state.ctx
    return ctx
