"""debatecode's errors as JSON answers: the CLI's message, an HTTP status of its kind, and the CLI's exit code."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from debatecode.errors import (
    DebatecodeError,
    ModelError,
    SandboxUnavailable,
    SessionNotFound,
    StoreError,
    UnknownModelError,
    UserError,
)
from debatecode.server.schemas import ApiError

__all__ = ["install_error_handlers", "status_of"]

logger = logging.getLogger(__name__)


def status_of(exc: DebatecodeError) -> int:
    """The HTTP status of an error: 404 for a missing session, 409 for a conflict, 4xx for bad input, 503 else."""
    from debatecode.server.api import Conflict

    if isinstance(exc, SessionNotFound):
        return status.HTTP_404_NOT_FOUND
    if isinstance(exc, Conflict):
        return status.HTTP_409_CONFLICT
    if isinstance(exc, UnknownModelError | UserError):
        return status.HTTP_422_UNPROCESSABLE_CONTENT
    if isinstance(exc, SandboxUnavailable | StoreError | ModelError):
        return status.HTTP_503_SERVICE_UNAVAILABLE
    return status.HTTP_500_INTERNAL_SERVER_ERROR


def install_error_handlers(app: FastAPI) -> None:
    """Answer debatecode errors and invalid bodies with ``ApiError`` JSON."""

    async def debatecode_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, DebatecodeError)
        logger.debug("%s %s: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
        body = ApiError(error=type(exc).__name__, message=str(exc), exit_code=int(exc.exit_code))
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
