"""The server's app factory: ``create_app(options)`` builds the FastAPI app that ``debatecode serve`` runs."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from debatecode.server.context import ServerContext, ServerOptions

if TYPE_CHECKING:
    from debatecode.server.runs import ServicesFactory

__all__ = ["create_app"]

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"


def create_app(options: ServerOptions, *, services: ServicesFactory | None = None) -> FastAPI:
    """The debatecode web app: REST under ``/v1``, event streams, and the dashboard at ``/``.

    The store is opened here (not at startup), so that an app driven directly
    through an ASGI transport works as one served by uvicorn. Shutting the app
    down cancels the sessions it still runs; the caller closes the store
    (``app.state.ctx.close()``) when done with the app. ``services``
    builds the services of each code session (default ``build_services``: the
    configured model client, sandbox and store).

    Raises:
        StoreError: the store of ``options.config`` cannot be opened.
    """
    from debatecode import __version__
    from debatecode.server import api, dashboard, decisions, stream
    from debatecode.server.auth import TokenMiddleware
    from debatecode.server.errors import install_error_handlers
    from debatecode.server.runs import SessionManager
    from debatecode.store import open_store

    store = open_store(options.config.store_url)
    options.data_dir.mkdir(parents=True, exist_ok=True)
    ctx = ServerContext(options=options, store=store, manager=SessionManager(store, options.data_dir, services))

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            ctx.manager.shutdown()

    app = FastAPI(
        title="debatecode",
        version=__version__,
        summary="Multi-agent code and design debates: start them, watch them live, decide their gates.",
        lifespan=lifespan,
    )
    app.state.ctx = ctx
    install_error_handlers(app, root=options.root, data_dir=options.data_dir.resolve())
    if options.token is not None:
        app.add_middleware(TokenMiddleware, token=options.token)
    app.include_router(api.router)
    app.include_router(decisions.router)
    app.include_router(stream.router)
    app.include_router(dashboard.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
