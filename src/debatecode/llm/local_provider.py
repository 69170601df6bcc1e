"""The embedded models as litellm's custom provider ``local``: requests in, llama.cpp generations out.

``LocalTransport`` (``debatecode.llm.client``) sends ``local/<name>`` requests
through ``litellm.acompletion`` like any model; ``register_provider`` adds the
handler here to litellm's custom-provider map. One choice goes to
``generate_local``; ``n > 1`` choices to ``local_batch`` in one batched decode.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from debatecode.errors import ModelRequestError
from debatecode.llm.local import PROVIDER, LocalGeneration, agenerate_local, generate_local
from debatecode.llm.local_batch import agenerate_local_batch, generate_local_batch

__all__ = [
    "SEEDS_METADATA_KEY",
    "STOP_METADATA_KEY",
    "batch_sampling",
    "fill_choices",
    "register_provider",
    "sampling",
]


STOP_METADATA_KEY = "debatecode_stop"
"""Metadata key carrying the complete stop list past litellm's 4-sequence cap."""
SEEDS_METADATA_KEY = "debatecode_seeds"
"""Metadata key carrying one seed per choice of an ``n > 1`` request (``batch_sampling``)."""


def sampling(optional_params: Mapping[str, Any], litellm_params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    # litellm keeps only 4 stop sequences (OpenAI's limit); the client also sends the
    # full list in metadata, which a local model can honour.
    metadata = (litellm_params or {}).get("metadata") or {}
    stop = metadata.get(STOP_METADATA_KEY) or optional_params.get("stop")
    return {
        "max_tokens": int(optional_params.get("max_tokens") or 256),
        "temperature": float(optional_params.get("temperature") or 0.0),
        "stop": [stop] if isinstance(stop, str) else stop,
        "seed": optional_params.get("seed"),
    }


def _choices(model: str, params: Mapping[str, Any]) -> int:
    n = 1 if params.get("n") is None else int(params["n"])
    if n < 1:
        raise ModelRequestError(f"n must be at least 1, not {n}", model=f"{PROVIDER}/{model}")
    return n


def _fill_response(model_response: Any, model: str, generation: LocalGeneration) -> Any:
    from litellm.types.utils import Usage

    model_response.choices[0].message.content = generation.text
    model_response.choices[0].finish_reason = generation.finish_reason or "stop"
    model_response.model = f"{PROVIDER}/{model}"
    # Real counts from llama.cpp, not litellm's estimate of them.
    model_response.usage = Usage(
        prompt_tokens=generation.prompt_tokens,
        completion_tokens=generation.completion_tokens,
        total_tokens=generation.prompt_tokens + generation.completion_tokens,
    )
    return model_response


@functools.cache
def _handler() -> Any:
    # Built on first registration: CustomLLM lives in litellm, whose import takes seconds.
    from litellm import CustomLLM

    class LocalLlamaLLM(CustomLLM):
        """litellm provider ``local``: the embedded llama.cpp models.

        ``n > 1`` samples the ``n`` choices in one batched decode (``local_batch``), the prompt evaluated once.
        """

        def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            params, litellm_params = kwargs.get("optional_params") or {}, kwargs.get("litellm_params")
            n = _choices(model, params)
            if n > 1:
                generations = generate_local_batch(model, messages, n, **batch_sampling(params, litellm_params, n))
                return fill_choices(kwargs["model_response"], model, generations)
            generation = generate_local(model, messages, **sampling(params, litellm_params))
            return _fill_response(kwargs["model_response"], model, generation)

        async def acompletion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
            params, litellm_params = kwargs.get("optional_params") or {}, kwargs.get("litellm_params")
            n = _choices(model, params)
            if n > 1:
                generations = await agenerate_local_batch(
                    model, messages, n, **batch_sampling(params, litellm_params, n)
                )
                return fill_choices(kwargs["model_response"], model, generations)
            generation = await agenerate_local(model, messages, **sampling(params, litellm_params))
            return _fill_response(kwargs["model_response"], model, generation)

    return LocalLlamaLLM()


_register_lock = threading.Lock()


def register_provider(litellm: Any) -> None:
    """Add the ``local`` provider to ``litellm.custom_provider_map`` (once; idempotent)."""
    with _register_lock:
        if any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
            return
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": PROVIDER, "custom_handler": _handler()},
        ]


def batch_sampling(
    optional_params: Mapping[str, Any], litellm_params: Mapping[str, Any] | None, n: int
) -> dict[str, Any]:
    """The litellm handler's sampling arguments for ``n`` choices of one prompt: one seed per choice.

    The seeds are the metadata's ``SEEDS_METADATA_KEY`` list, else ``seed + i``, else ``i``.

    Raises:
        ModelRequestError: the metadata lists fewer than ``n`` seeds.
    """
    one = sampling(optional_params, litellm_params)
    seed = one.pop("seed")
    seeds = ((litellm_params or {}).get("metadata") or {}).get(SEEDS_METADATA_KEY)
    if seeds is None:
        seeds = [(int(seed) if seed is not None else 0) + i for i in range(n)]
    if len(seeds) < n:
        raise ModelRequestError(f"{n} choices need {n} seeds in {SEEDS_METADATA_KEY}; got {len(seeds)}")
    return {**one, "seeds": [int(s) for s in seeds]}


def fill_choices(model_response: Any, model: str, generations: Sequence[LocalGeneration]) -> Any:
    """``n`` choices from one batch; usage counts the prompt once (it was evaluated once) and every completion.

    Each choice's own completion tokens are in its message's ``provider_specific_fields["completion_tokens"]``.
    """
    from litellm.types.utils import Choices, Message, Usage

    model_response.choices = [
        Choices(
            index=i,
            finish_reason=generation.finish_reason or "stop",
            message=Message(
                content=generation.text, provider_specific_fields={"completion_tokens": generation.completion_tokens}
            ),
        )
        for i, generation in enumerate(generations)
    ]
    model_response.model = f"{PROVIDER}/{model}"
    prompt_tokens = generations[0].prompt_tokens
    completion_tokens = sum(generation.completion_tokens for generation in generations)
    model_response.usage = Usage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
    )
    return model_response
