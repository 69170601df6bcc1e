"""N samples of one prompt from the embedded model in one batched decode.

``generate_local_batch`` evaluates the prompt once, into llama.cpp sequence 0,
copies its KV entries to sequences 1..n-1 (``llama_memory_seq_cp``: the cells
are shared, not duplicated) and then decodes every unfinished sequence together,
one token per sequence per ``llama_decode`` call. Each sequence samples from its
own logits row with its own sampler chain and seed; the chain is the one
``Llama.create_completion`` builds (top-k 40, top-p, min-p 0.05, temperature;
greedy at temperature 0), so a batched draft is drawn from the same distribution
as a single one. Stop strings, EOS and ``max_tokens`` end each sequence as
``Llama.create_completion`` ends a single one, and a finished sequence leaves the
batch. On one or two cores a step for 8 sequences costs far less than 8 single
steps, since the weights are read once per step (benchmarks/results/batched-drafts/).

The batch runs in a second llama.cpp context on the loaded model's weights, made
on first use with room for several sequences in one unified KV cache (the
model's own context holds one sequence; its prompt cache stays untouched). It
costs about 100 MB for an 8192-token window and is freed with the model.

Batched floats are not the single-sequence path's floats: a batched draft at
temperature 0 may differ from ``generate_local``'s greedy reply. It is
reproducible: the same prompt, seeds and ``n`` give the same drafts.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from debatecode.errors import ModelError, ModelRequestError
from debatecode.llm.local import (
    LOCAL_MODELS,
    LocalGeneration,
    _chat_formatter,
    _completion_prompt_tokens,
    _llama_settings,
    _pool,
    _queue,
    messages_to_prompt,
)

__all__ = ["BATCH_MIN_SEQUENCES", "agenerate_local_batch", "generate_local_batch"]

BATCH_MIN_SEQUENCES = 8
"""The fewest sequences a batch context is made for; a larger ``n`` replaces it with one for the next power of two."""

_TOP_K = 40
_MIN_P = 0.05
_SEED_MASK = 0xFFFFFFFF  # llama.cpp seeds are uint32, as Llama.set_seed passes them
_UTF8_TAIL = 4


@dataclass
class _Draft:
    """One sequence's state, following ``Llama._create_completion``'s loop."""

    seq: int
    sampler: Any
    tokens: list[int] = field(default_factory=list)
    pieces: bytes = b""
    text: bytes = b""
    finish_reason: str | None = None
    multibyte_fix: int = 0


class _BatchContext:
    """A llama.cpp context with a unified KV cache for ``n_seq_max`` sequences, on a loaded model's weights."""

    def __init__(self, llama: Any, n_ctx: int, n_batch: int, n_threads: int, n_seq_max: int) -> None:
        import llama_cpp

        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = n_batch
        params.n_ubatch = n_batch
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        params.n_seq_max = n_seq_max
        params.kv_unified = True  # the prompt's cells are shared by every sequence, not copied per sequence
        params.no_perf = True
        self.ctx = llama_cpp.llama_init_from_model(llama._model.model, params)
        if not self.ctx:
            raise ModelError(f"llama.cpp could not make a context for {n_seq_max} sequences")
        self.n_ctx = n_ctx
        self.n_batch = n_batch
        self.n_seq_max = n_seq_max
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(n_batch, 0, n_seq_max)

    def close(self) -> None:
        import llama_cpp

        if self.ctx:
            llama_cpp.llama_batch_free(self.batch)
            llama_cpp.llama_free(self.ctx)
            self.ctx = None


_contexts: weakref.WeakKeyDictionary[Any, _BatchContext] = weakref.WeakKeyDictionary()
_contexts_lock = threading.Lock()


def _batch_context(name: str, llama: Any, n: int) -> _BatchContext:
    """The batch context of the loaded ``llama``, for at least ``n`` sequences (made or grown on first need).

    It is closed with ``llama`` (a callback on the ``Llama``'s exit stack, which frees it before the weights).
    """
    import llama_cpp

    with _contexts_lock:
        context = _contexts.get(llama)
        if context is not None and context.n_seq_max >= n:
            return context
        if context is not None:
            context.close()
        n_seq_max = min(max(BATCH_MIN_SEQUENCES, 1 << (n - 1).bit_length()), llama_cpp.llama_max_parallel_sequences())
        settings = _llama_settings(LOCAL_MODELS[name])
        context = _BatchContext(llama, llama.n_ctx(), settings["n_batch"], settings["n_threads"], n_seq_max)
        _contexts[llama] = context
        llama._stack.callback(context.close)
        return context


def _prompt(name: str, llama: Any, prompt: str | Sequence[Mapping[str, Any]]) -> tuple[list[int], list[str]]:
    """The prompt tokens and the stop strings ``generate_local`` would use (the chat template adds its EOS text)."""
    if isinstance(prompt, str) or LOCAL_MODELS[name].prompt_style != "chat":
        text = prompt if isinstance(prompt, str) else messages_to_prompt(prompt)
        return _completion_prompt_tokens(llama, text), []
    formatted = _chat_formatter(name, llama)(
        messages=[{"role": str(m.get("role") or "user"), "content": str(m.get("content") or "")} for m in prompt]
    )
    tokens: list[int] = llama.tokenize(
        formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
    )
    stop = formatted.stop or []
    return tokens, [stop] if isinstance(stop, str) else list(stop)


def _sampler(temperature: float, top_p: float, seed: int) -> Any:
    """The sampler chain ``Llama._init_sampler`` builds for these settings (no penalties: theirs are 1.0)."""
    from llama_cpp import _internals

    sampler = _internals.LlamaSampler()
    seed &= _SEED_MASK
    if temperature < 0.0:
        sampler.add_dist(seed)
    elif temperature == 0.0:
        sampler.add_greedy()
    else:
        sampler.add_top_k(_TOP_K)
        sampler.add_typical(1.0, 1)
        sampler.add_top_p(top_p, 1)
        sampler.add_min_p(_MIN_P, 1)
        sampler.add_temp(temperature)
        sampler.add_dist(seed)
    return sampler


def generate_local_batch(
    name: str,
    prompt: str | Sequence[Mapping[str, Any]],
    n: int,
    *,
    max_tokens: int,
    temperature: float = 0.0,
    top_p: float = 0.95,
    seeds: Sequence[int] | None = None,
    stop: Sequence[str] | None = None,
) -> list[LocalGeneration]:
    """``n`` completions of one ``prompt`` by the embedded model ``name``, decoded as one batch (blocking).

    ``prompt`` is taken as ``generate_local`` takes it. Draft ``i`` samples with ``seeds[i]``
    (default: ``i``). Each ``LocalGeneration`` reports the prompt's tokens (the same for all:
    the prompt was evaluated once, so charge them once) and its own completion tokens.
    When ``n`` drafts of ``max_tokens`` do not fit the context window beside the prompt,
    they are decoded in several waves, each after the prompt evaluated once.

    Raises:
        ValueError: ``n`` < 1, or fewer ``seeds`` than ``n``.
        ModelError: the model cannot be loaded (see ``local._pool``), or decoding failed.
        ModelRequestError: the prompt is empty or does not fit the context window.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    seeds = list(range(n)) if seeds is None else list(seeds)
    if len(seeds) < n:
        raise ValueError(f"{n} drafts need {n} seeds; got {len(seeds)}")
    with _pool(name).copy() as model:
        llama = model.llama
        tokens, template_stop = _prompt(name, llama, prompt)
        n_ctx = llama.n_ctx()
        if not tokens or len(tokens) >= n_ctx:
            raise ModelRequestError(
                f"local/{name} rejected the prompt: {len(tokens)} tokens (the context window holds {n_ctx - 1})",
                model=f"local/{name}",
            )
        # As Llama._create_completion: no limit, or one past the window, means up to the window.
        if max_tokens <= 0 or max_tokens + len(tokens) >= n_ctx:
            max_tokens = n_ctx - len(tokens)
        import llama_cpp

        # One more token per draft: the length check waits while a draft ends inside a UTF-8 character.
        room = (n_ctx - len(tokens)) // (max_tokens + _UTF8_TAIL)
        per_wave = max(1, min(n, room, llama_cpp.llama_max_parallel_sequences(), LOCAL_MODELS[name].n_batch))
        context = _batch_context(name, llama, per_wave)
        stops = [s.encode("utf-8") for s in [*(stop or []), *template_stop]]
        drafts: list[_Draft] = []
        try:
            # All but the last prompt token go into sequence 0 once; each wave shares them and then
            # evaluates the last one for all its drafts in one batch entry, whose logits start every draft.
            _evaluate_prompt(name, context, tokens[:-1])
            for start in range(0, n, per_wave):
                wave = [
                    _Draft(seq=i, sampler=_sampler(temperature, top_p, seeds[start + i]))
                    for i in range(min(per_wave, n - start))
                ]
                drafts.extend(wave)
                for draft in wave[1:]:
                    llama_cpp.llama_memory_seq_cp(context.memory, 0, draft.seq, -1, -1)
                _decode_wave(name, llama, context, tokens, wave, max_tokens, stops)
                # Back to the shared prompt: drop the last prompt token and every generated one.
                llama_cpp.llama_memory_seq_rm(context.memory, 0, len(tokens) - 1, -1)
                for draft in wave[1:]:
                    llama_cpp.llama_memory_seq_rm(context.memory, draft.seq, -1, -1)
        finally:
            llama_cpp.llama_memory_clear(context.memory, True)
            for draft in drafts:
                draft.sampler.close()
    return [
        LocalGeneration(
            text=draft.text.decode("utf-8", errors="ignore"),
            prompt_tokens=len(tokens),
            completion_tokens=len(draft.tokens),
            finish_reason=draft.finish_reason,
        )
        for draft in drafts
    ]


def _decode(name: str, context: _BatchContext) -> None:
    import llama_cpp

    code = llama_cpp.llama_decode(context.ctx, context.batch)
    if code != 0:
        raise ModelError(f"local/{name} failed to decode a batch (llama_decode returned {code})", model=f"local/{name}")


def _evaluate_prompt(name: str, context: _BatchContext, tokens: Sequence[int]) -> None:
    """Evaluate ``tokens`` into sequence 0 in ``n_batch`` chunks from position 0, as the model's own context does."""
    batch = context.batch
    for start in range(0, len(tokens), context.n_batch):
        chunk = tokens[start : start + context.n_batch]
        batch.n_tokens = len(chunk)
        for i, token in enumerate(chunk):
            batch.token[i] = token
            batch.pos[i] = start + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = False  # sampling starts from the last prompt token, evaluated per wave
        _decode(name, context)


def _decode_wave(
    name: str,
    llama: Any,
    context: _BatchContext,
    prompt: list[int],
    wave: list[_Draft],
    max_tokens: int,
    stops: list[bytes],
) -> None:
    """Evaluate the last ``prompt`` token for every draft of ``wave`` at once, then sample them all to their ends."""
    import llama_cpp

    vocab = llama._model.vocab
    batch = context.batch
    batch.n_tokens = 1
    batch.token[0] = prompt[-1]
    batch.pos[0] = len(prompt) - 1
    batch.n_seq_id[0] = len(wave)
    for i, draft in enumerate(wave):
        batch.seq_id[0][i] = draft.seq
    batch.logits[0] = True
    _decode(name, context)
    active = wave
    rows = [0] * len(active)
    while active:
        for draft, row in zip(active, rows, strict=True):
            token = llama_cpp.llama_sampler_sample(draft.sampler.sampler, context.ctx, row)
            _accept(llama, vocab, draft, token, max_tokens, stops)
        active = [draft for draft in active if draft.finish_reason is None]
        if not active:
            return
        batch.n_tokens = len(active)
        for row, draft in enumerate(active):
            batch.token[row] = draft.tokens[-1]
            batch.pos[row] = len(prompt) + len(draft.tokens) - 1
            batch.n_seq_id[row] = 1
            batch.seq_id[row][0] = draft.seq
            batch.logits[row] = True
        _decode(name, context)
        rows = list(range(len(active)))


def _text(llama: Any, draft: _Draft) -> bytes:
    """``llama.detokenize(draft.tokens)``, from the pieces added one token at a time (it concatenates them too)."""
    if draft.tokens and draft.tokens[0] == llama.token_bos() and draft.pieces[:1] == b" ":
        return draft.pieces[1:]
    return draft.pieces


def _accept(llama: Any, vocab: Any, draft: _Draft, token: int, max_tokens: int, stops: list[bytes]) -> None:
    """Add ``token`` to ``draft`` and decide whether it ends there, as ``Llama._create_completion`` does."""
    import llama_cpp

    if llama_cpp.llama_vocab_is_eog(vocab, token):
        draft.text = _text(llama, draft)
        draft.finish_reason = "stop"
        return
    draft.tokens.append(token)
    draft.pieces += llama._model.detokenize([token])
    text = _text(llama, draft)
    # While the text ends inside a multi-byte UTF-8 character, Llama checks neither stops nor the length.
    for k, char in enumerate(text[-3:]):
        k = 3 - k
        for num, pattern in ((2, 192), (3, 224), (4, 240)):
            if num > k and pattern & char == pattern:
                draft.multibyte_fix = num - k
    if draft.multibyte_fix > 0:
        draft.multibyte_fix -= 1
        return
    found = [s for s in stops if s in text]
    if found:
        draft.text = text[: text.index(found[0])]
        draft.finish_reason = "stop"
        return
    if len(draft.tokens) >= max_tokens:
        draft.text = text
        draft.finish_reason = "length"


async def agenerate_local_batch(
    name: str,
    prompt: str | Sequence[Mapping[str, Any]],
    n: int,
    *,
    max_tokens: int,
    temperature: float = 0.0,
    top_p: float = 0.95,
    seeds: Sequence[int] | None = None,
    stop: Sequence[str] | None = None,
) -> list[LocalGeneration]:
    """``generate_local_batch`` in a worker thread, queued with ``agenerate_local``'s calls to the same model.

    Raises:
        ValueError, ModelError, ModelRequestError: see ``generate_local_batch``.
    """
    async with _queue(name):
        return await asyncio.to_thread(
            generate_local_batch,
            name,
            prompt,
            n,
            max_tokens=max_tokens,
            temperature=temperature,
            top_p=top_p,
            seeds=seeds,
            stop=stop,
        )
