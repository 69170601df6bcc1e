"""The session store: debate sessions, turns and code versions in SQL.

``open_store(url)`` opens (creating and migrating as needed) the store at a
SQLAlchemy URL; SQLite is the default, PostgreSQL is supported. SQLAlchemy is
imported on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports

if TYPE_CHECKING:
    from debatecode.store.repository import SessionStore, open_store

__all__ = ["SessionStore", "open_store"]

_LAZY = dict.fromkeys(__all__, "debatecode.store.repository")

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
