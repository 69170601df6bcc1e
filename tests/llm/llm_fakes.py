"""Test doubles for the LLM gateway tests (imported by the test modules of this folder)."""

from __future__ import annotations

from collections.abc import Sequence

from debatecode.llm.client import CompletionRequest, RawCompletion

__all__ = ["FakeTransport"]


class FakeTransport:
    """A transport that fails with the given exceptions first, then answers; it counts attempts."""

    def __init__(
        self,
        failures: Sequence[BaseException] | None = None,
        *,
        text: str = "ok",
        prompt_tokens: int | None = 10,
        completion_tokens: int | None = 5,
        cost_usd: float | None = None,
    ) -> None:
        self.failures = list(failures or [])
        self.requests: list[CompletionRequest] = []
        self.text = text
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.cost_usd = cost_usd

    @property
    def attempts(self) -> int:
        return len(self.requests)

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        self.requests.append(request)
        if self.failures:
            raise self.failures.pop(0)
        return RawCompletion(
            text=self.text,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            finish_reason="stop",
            cost_usd=self.cost_usd,
        )
