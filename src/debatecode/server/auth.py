"""The server's access rule: loopback binds may go without a token; anything else needs one on every request.

A request carries the token as ``Authorization: Bearer <token>``, as the
``debatecode_token`` cookie (which a dashboard page opened once with
``?token=<token>`` sets, so that the browser's event streams carry it too), or as
``?token=``. Comparison is constant-time.
"""

from __future__ import annotations

import ipaddress
import secrets

from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp

from debatecode.errors import ConfigError

__all__ = ["COOKIE", "TokenMiddleware", "check_bind", "is_loopback"]

COOKIE = "debatecode_token"
TOKEN_VARIABLE = "DEBATECODE_SERVER_TOKEN"
OPEN_PATHS = ("/v1/health",)
"""Answered without a token, so that a load balancer or ``curl`` can check the server is up."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` only reaches this machine (``127.0.0.1``, ``::1``, ``localhost``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token.

    Raises:
        ConfigError: ``host`` is not a loopback address and no token is set.
    """
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"serving on {host} makes the server reachable from other machines, and it can run code: "
            f"give a token with --token or {TOKEN_VARIABLE}, or bind to 127.0.0.1",
            key="host",
        )
    if token is not None and len(token) < 16:
        raise ConfigError("the server token is too short: use at least 16 characters (e.g. `openssl rand -hex 16`)")


class TokenMiddleware(BaseHTTPMiddleware):
    """Answers 401 to any request without the server's token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        super().__init__(app)
        self.token = token

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.url.path in OPEN_PATHS:
            return await call_next(request)
        header = request.headers.get("authorization", "")
        offered = [
            header[7:].strip() if header.lower().startswith("bearer ") else "",
            request.cookies.get(COOKIE, ""),
            request.query_params.get("token", ""),
        ]
        if not any(candidate and secrets.compare_digest(candidate, self.token) for candidate in offered):
            return JSONResponse(
                {
                    "error": "Unauthorized",
                    "message": "this server needs its token: send `Authorization: Bearer <token>` "
                    "(or open the dashboard once with ?token=<token>)",
                    "exit_code": 2,
                },
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        response = await call_next(request)
        if request.query_params.get("token") and secrets.compare_digest(request.query_params["token"], self.token):
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
        return response
