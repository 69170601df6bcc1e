"""``TokenBudget``: one session's token allowance, kept apart from the client that makes the calls.

Sessions that share one ``LLMClient`` each pass their own budget to
``LLMClient.complete(..., budget=...)``; a budget counts only the calls made
against it, so one session's spend never eats into another's. The client still
counts every call in its own ``usage`` and ``calls``.
"""

from __future__ import annotations

import threading

from debatecode.errors import BudgetExceeded
from debatecode.llm.transport import Completion, UsageTotals

__all__ = ["TokenBudget"]


class TokenBudget:
    """A token allowance (prompt plus completion tokens) with its own usage totals.

    ``limit=None`` is unlimited (the totals are still kept). Safe to share between
    threads and concurrent tasks. Calls running concurrently each reserve against the
    budget as it was when they started, so together they may overshoot it by their
    completions (as with ``LLMClient(token_budget=...)``).
    """

    def __init__(self, limit: int | None) -> None:
        if limit is not None and limit < 0:
            raise ValueError(f"a token budget cannot be negative: {limit}")
        self.limit = limit
        self._usage = UsageTotals()
        self._lock = threading.Lock()

    @property
    def usage(self) -> UsageTotals:
        """A snapshot of the tokens, cost and calls charged so far."""
        with self._lock:
            return self._usage.model_copy()

    @property
    def used(self) -> int:
        """Tokens charged so far (prompt plus completion)."""
        with self._lock:
            return self._usage.total_tokens

    @property
    def remaining(self) -> int | None:
        """Tokens left, or None when unlimited."""
        if self.limit is None:
            return None
        return max(0, self.limit - self.used)

    def reserve(self, max_tokens: int) -> int:
        """The ``max_tokens`` a call may use: ``max_tokens`` capped at what is left.

        Raises:
            BudgetExceeded: the budget is already spent.
        """
        if self.limit is None:
            return max_tokens
        used = self.used
        if used >= self.limit:
            raise BudgetExceeded(used, self.limit)
        return min(max_tokens, self.limit - used)

    def charge(self, completion: Completion) -> None:
        """Count one finished call."""
        with self._lock:
            self._usage.add(completion)

    def __repr__(self) -> str:
        return f"TokenBudget(limit={self.limit}, used={self.used})"
