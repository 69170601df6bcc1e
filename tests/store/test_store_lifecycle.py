"""A store closes at the end of a ``with`` or ``async with`` block, whichever way the block ends."""

from __future__ import annotations

import asyncio

import pytest

from debatecode.errors import StoreError
from debatecode.store import SessionStore, open_store


def _refuses_work(store: SessionStore) -> None:
    with pytest.raises(StoreError, match="closed"):
        store.list_sessions()


def test_async_with_closes_the_store_after_the_block(store_url: str) -> None:
    async def main() -> SessionStore:
        async with open_store(store_url) as store:
            assert store.list_sessions() == []
        return store

    _refuses_work(asyncio.run(main()))


def test_async_with_closes_the_store_when_the_block_raises(store_url: str) -> None:
    kept: list[SessionStore] = []

    async def main() -> None:
        async with open_store(store_url) as store:
            kept.append(store)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        asyncio.run(main())
    _refuses_work(kept[0])


def test_with_closes_the_store_and_close_stays_harmless(store_url: str) -> None:
    with open_store(store_url) as store:
        assert store.list_sessions() == []
    _refuses_work(store)
    store.close()
