"""The session store: debate sessions, turns and code versions in SQL.

``open_store(url)`` opens (creating and migrating as needed) the store at a
SQLAlchemy URL; SQLite is the default, PostgreSQL is supported. SQLAlchemy is
imported on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debatecode.store.repository import SessionStore, open_store

__all__ = ["SessionStore", "open_store"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from debatecode.store import repository

        return getattr(repository, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
