"""``errors_in_threads``: one call per thread, all started together, and what they raised. TEST-ONLY.

Thread-safety tests start a few threads on the same object and then check that nothing was lost.
An exception in a thread does not reach the test by itself, so each one is collected and returned.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["errors_in_threads"]

T = TypeVar("T")


def errors_in_threads(work: Callable[[T], object], arguments: Iterable[T]) -> list[BaseException]:
    """Run ``work(argument)`` for every argument, each in a thread of its own, started before any is joined.

    Returns what the calls raised (any ``BaseException``), in no particular order; ``[]`` when none did.
    """
    errors: list[BaseException] = []

    def run(argument: T) -> None:
        try:
            work(argument)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(argument,)) for argument in arguments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
