"""The web server: REST API, live event streams and the dashboard (``debatecode serve``; the ``[server]`` extra).

``create_app(ServerOptions(...))`` builds the FastAPI app. Importing this
package needs FastAPI; the rest of debatecode never imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports

if TYPE_CHECKING:
    from debatecode.server.app import create_app
    from debatecode.server.context import ServerOptions

__all__ = ["ServerOptions", "create_app"]

_LAZY = {"create_app": "debatecode.server.app", "ServerOptions": "debatecode.server.context"}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
