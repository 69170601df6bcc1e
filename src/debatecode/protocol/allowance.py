"""A per-agent, per-round token allowance (``llm.round_token_budget``)."""

from __future__ import annotations

__all__ = ["RoundBudgetExceeded", "TokenAllowance"]


class RoundBudgetExceeded(Exception):
    """An agent spent more than its per-round token allowance.

    Deliberately not a ``DebatecodeError``: it is local to this module and the
    engine converts it (for example into a truncated turn or a ``RunError``).
    """

    def __init__(self, agent: str, round_no: int, spent: int, allowance: int) -> None:
        super().__init__(f"{agent} spent {spent} tokens in round {round_no}; the per-round allowance is {allowance}")
        self.agent = agent
        self.round_no = round_no
        self.spent = spent
        self.allowance = allowance


class TokenAllowance:
    """Tokens per agent per round; ``per_round=None`` means unlimited.

    Raises:
        ValueError: from the constructor, when ``per_round`` is below 1.
    """

    def __init__(self, per_round: int | None) -> None:
        if per_round is not None and per_round < 1:
            raise ValueError(f"per_round must be at least 1 (or None), got {per_round}")
        self.per_round = per_round
        self._spent: dict[tuple[str, int], int] = {}

    def spent(self, agent: str, round_no: int) -> int:
        """Tokens charged to ``agent`` in ``round_no`` so far."""
        return self._spent.get((agent, round_no), 0)

    def charge(self, agent: str, round_no: int, tokens: int) -> None:
        """Charge tokens already spent; they are recorded even when this raises.

        Raises:
            ValueError: ``tokens`` is negative.
            RoundBudgetExceeded: the agent's total for the round is now above ``per_round``.
        """
        if tokens < 0:
            raise ValueError(f"tokens must not be negative, got {tokens}")
        total = self._spent[agent, round_no] = self.spent(agent, round_no) + tokens
        if self.per_round is not None and total > self.per_round:
            raise RoundBudgetExceeded(agent, round_no, total, self.per_round)

    def remaining(self, agent: str, round_no: int) -> int | None:
        """Tokens ``agent`` may still spend in ``round_no`` (never below 0); ``None`` when unlimited."""
        if self.per_round is None:
            return None
        return max(self.per_round - self.spent(agent, round_no), 0)
