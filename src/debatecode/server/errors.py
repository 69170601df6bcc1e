"""debatecode's errors as JSON answers: the CLI's message, an HTTP status of its kind, and the CLI's exit code.

A message never shows where the server keeps its files: paths under the server's
root come back relative to it, its data folder and home folder by name.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from fastapi import FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from debatecode.errors import (
    DebatecodeError,
    ModelError,
    SandboxUnavailable,
    SessionBusy,
    SessionNotFound,
    StoreError,
    UnknownModelError,
    UserError,
)
from debatecode.server.schemas import ApiError

__all__ = ["install_error_handlers", "public_message", "status_of"]

logger = logging.getLogger(__name__)


def status_of(exc: DebatecodeError) -> int:
    """The HTTP status of an error: 404 for a missing session, 409 for a conflict, 4xx for bad input, 503 else."""
    from debatecode.server.api import Conflict

    if isinstance(exc, SessionNotFound):
        return status.HTTP_404_NOT_FOUND
    if isinstance(exc, Conflict | SessionBusy):
        return status.HTTP_409_CONFLICT
    if isinstance(exc, UnknownModelError | UserError):
        return status.HTTP_422_UNPROCESSABLE_CONTENT
    if isinstance(exc, SandboxUnavailable | StoreError | ModelError):
        return status.HTTP_503_SERVICE_UNAVAILABLE
    return status.HTTP_500_INTERNAL_SERVER_ERROR


def public_message(message: str, root: Path, data_dir: Path) -> str:
    """``message`` with the server's absolute folders hidden.

    Paths under ``root`` become relative to it (``root`` itself is ``.``); a
    ``data_dir`` outside ``root`` is ``<data-dir>``, and the home folder ``~``.
    """
    names = {str(root): "."}
    if not data_dir.is_relative_to(root):
        names[str(data_dir)] = "<data-dir>"
    home = str(Path.home())
    if home not in ("/", ""):
        names.setdefault(home, "~")
    for folder in sorted(names, key=len, reverse=True):  # the deepest first: a data folder under home stays named
        name = names[folder]
        message = message.replace(folder + "/", "" if name == "." else f"{name}/")
        message = re.sub(re.escape(folder) + r"(?![\w.-])", name, message)
    return message


def install_error_handlers(app: FastAPI, *, root: Path, data_dir: Path) -> None:
    """Answer debatecode errors and invalid bodies with ``ApiError`` JSON; messages name paths relative to ``root``."""

    async def debatecode_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, DebatecodeError)
        logger.debug("%s %s: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
        message = public_message(str(exc), root, data_dir)
        body = ApiError(error=type(exc).__name__, message=message, exit_code=int(exc.exit_code))
        return JSONResponse(body.model_dump(), status_code=status_of(exc))

    async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}" for error in exc.errors()
        )
        body = ApiError(error="InvalidRequest", message=f"invalid request: {problems}", exit_code=2)
        return JSONResponse(
            body.model_dump() | {"detail": [{k: e[k] for k in ("type", "loc", "msg") if k in e} for e in exc.errors()]},
            status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
        )

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        body = ApiError(error="HTTPError", message=str(exc.detail), exit_code=None)
        return JSONResponse(body.model_dump(), status_code=exc.status_code, headers=exc.headers)

    app.add_exception_handler(DebatecodeError, debatecode_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
