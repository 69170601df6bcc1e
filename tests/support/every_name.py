"""A known-differences list that names every test: for a sandbox mode that refuses every job here."""

from __future__ import annotations


class EveryName(dict[str, str]):
    """Maps every test or attack name to one reason (``in`` is always true)."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason

    def __contains__(self, name: object) -> bool:
        return True

    def __getitem__(self, name: str) -> str:
        return self.reason

    def get(self, name: str, default: object = None) -> str:  # type: ignore[override]
        return self.reason
