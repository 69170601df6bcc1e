"""How the dashboard's pages are made: Jinja2 templates with autoescape, markdown without HTML, strict headers.

Everything a page shows came from a model or a job, so it is treated as
hostile: templates escape every value (autoescape is on and there is no
``|safe`` on data), markdown is rendered with raw HTML disabled and unsafe link
schemes refused, and every page carries a Content-Security-Policy that allows
only the dashboard's own script and stylesheet, so that even a missed escape
could not run a script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import jinja2
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

__all__ = [
    "SECURITY_HEADERS",
    "format_duration",
    "format_tokens",
    "format_when",
    "page",
    "render_markdown",
    "root_of",
    "templates",
]

TEMPLATES = Path(__file__).parent / "templates"

SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
"""Sent with every dashboard page and file."""


def format_duration(seconds: float | None) -> str:
    """``7.9 s``, ``2 m 05 s``, ``1 h 02 m``; ``-`` for nothing."""
    if seconds is None or seconds < 0:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} m {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} m"


def format_tokens(count: int | None) -> str:
    """``12,345``; ``-`` for nothing."""
    return "-" if count is None else f"{count:,}"


def format_when(moment: datetime | None) -> str:
    """``2026-11-26 18:38:35 UTC`` (naive times are taken as UTC); ``-`` for nothing."""
    if moment is None:
        return "-"
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + " UTC"


def root_of(request: Request) -> str:
    """The path the app is mounted under (``""`` at the root): every link of a page starts with it."""
    root: str = request.scope.get("root_path", "")
    return root.rstrip("/")


@cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    md.add_render_rule("image", _render_image)
    return md


def _render_image(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    """Relative images (``![plot](plot.png)``) point at ``env["image_base"]``, where the page serves its files."""
    token = tokens[idx]
    base = env.get("image_base")
    src = str(token.attrGet("src") or "")
    if base is not None and _is_relative(src):
        token.attrSet("src", base + quote(src))
    rendered: str = renderer.image(tokens, idx, options, env)
    return rendered


def _is_relative(url: str) -> bool:
    parts = urlsplit(url)
    return bool(url) and not parts.scheme and not parts.netloc and not url.startswith("/")


def render_markdown(text: str, *, image_base: str | None = None) -> Markup:
    """``text`` as HTML: raw HTML in it is shown as text, ``javascript:`` and similar links are dropped.

    ``image_base`` (e.g. ``/bench/run/files/``) is put before relative image paths.
    """
    return Markup(_markdown().render(text, {"image_base": image_base}))  # markdown-it escaped it (html off)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(duration=format_duration, tokens=format_tokens, when=format_when, markdown=render_markdown)
    return env


templates = Jinja2Templates(env=_environment())
"""The dashboard's templates (``server/templates``)."""


def page(request: Request, name: str, context: Mapping[str, Any], *, status_code: int = 200) -> HTMLResponse:
    """Template ``name`` rendered with ``context`` (plus ``request`` and ``root``), with the security headers."""
    response = templates.TemplateResponse(
        request, name, {"root": root_of(request), **context}, status_code=status_code, headers=dict(SECURITY_HEADERS)
    )
    return response
