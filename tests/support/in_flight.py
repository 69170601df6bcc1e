"""``InFlight``: how many calls of some coroutine functions run at once, to check a ``--jobs`` limit. TEST-ONLY."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import ParamSpec, TypeVar

__all__ = ["InFlight"]

P = ParamSpec("P")
R = TypeVar("R")


class InFlight:
    """Counts the wrapped calls that have started and not finished; ``most`` is the highest count seen."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0

    def counted(self, function: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        """``function``, its calls counted here (every function wrapped by one ``InFlight`` shares the count)."""

        @wraps(function)
        async def run(*args: P.args, **kwargs: P.kwargs) -> R:
            self.now += 1
            self.most = max(self.most, self.now)
            try:
                return await function(*args, **kwargs)
            finally:
                self.now -= 1

        return run
