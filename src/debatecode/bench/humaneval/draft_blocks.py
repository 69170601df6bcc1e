"""A vote's sampled drafts decoded in blocks: the prompt evaluated once, the drafts advanced together.

Vote sample ``j`` (``j >= 1``; sample 0 decodes greedily on its own) belongs to
block ``(j - 1) // size``. The first draft request of a block samples every
draft of the block in one batched call (``complete_batch`` of the transport that
serves the model, ``local/`` models only), each with the seed and temperature its
own sample would use, and keeps the others for their samples' requests. A draft
is therefore the same whichever sample of its block asks first, in one run or
in a run resumed half-way through a block (that one decodes the block again).

The prompt was evaluated once, so its tokens are charged once: to the sample
whose request started the block; the block's other drafts report 0 prompt
tokens. A draft is served only to a request equal to the one it was sampled for
(model, messages, limits, seed, temperature); anything else goes out as usual.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable

from debatecode.llm.client import BatchSender
from debatecode.llm.transport import CompletionRequest, RawCompletion

__all__ = ["DraftBlocks", "block_of"]

TemperatureOf = Callable[[int], float]
"""The sampling temperature of vote sample ``k``."""

_KEPT = 512
"""Drafts kept at most, waiting for their samples (the oldest go first)."""


def block_of(index: int, size: int) -> range:
    """The sample indexes of ``index``'s block (sample 0 is a block of its own)."""
    if index == 0 or size <= 1:
        return range(index, index + 1)
    start = 1 + (index - 1) // size * size
    return range(start, start + size)


def _key(request: CompletionRequest) -> str:
    return json.dumps(
        [request.model, request.messages, request.max_tokens, request.stop, request.seed, request.temperature],
        sort_keys=True,
        default=str,
    )


class DraftBlocks:
    """Drafts sampled ahead for the samples of their block, shared by every vote sample of one process."""

    def __init__(self) -> None:
        self._ready: OrderedDict[str, RawCompletion] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    async def draft(
        self, request: CompletionRequest, index: int, size: int, send: BatchSender, temperature_of: TemperatureOf
    ) -> RawCompletion:
        """Sample ``index``'s draft for ``request``: from its block's batch, which this call decodes if needed."""
        block = block_of(index, size)
        requests = [
            request.model_copy(update={"seed": (request.seed or 0) + (k - index), "temperature": temperature_of(k)})
            for k in block
        ]
        mine = _key(request)
        if len({r.temperature for r in requests}) > 1:  # one batch samples at one temperature
            return (await send(request, [request.seed or 0]))[0]
        lock = self._locks.setdefault(_key(requests[0]), asyncio.Lock())
        async with lock:
            if mine not in self._ready:
                raws = await send(
                    request.model_copy(update={"seed": requests[0].seed}), [r.seed or 0 for r in requests]
                )
                for k, (member, raw) in enumerate(zip(requests, raws, strict=True)):
                    shared = raw if block[k] == index else raw.model_copy(update={"prompt_tokens": 0})
                    self._ready[_key(member)] = shared
                while len(self._ready) > _KEPT:
                    self._ready.popitem(last=False)
            return self._ready.pop(mine)
