"""Keep the embedded model's weights out of llama.cpp's AMX buffers, which crash on CPUs that have AMX.

llama-cpp-python compiles llama.cpp for the CPU it is installed on. On a CPU with Intel AMX (Xeon 4th
generation and later) that build puts some weight tensors in AMX buffers ("amx repack tensor ..." in its
log), and the first decode then dies with a segmentation fault: a plain ``create_chat_completion`` of
Qwen2.5-Coder-0.5B Q4_K_M does, with one thread or two, as does the batched decode (measured with
llama-cpp-python 0.3.36 on an "Intel(R) Xeon(R) Processor" with ``amx_int8``; docs/models.md).

llama.cpp's model parameter ``use_extra_bufts = false`` keeps every weight in plain CPU buffers, and the
same model then answers normally. ``Llama`` has no argument for it, so ``avoid_amx_weights`` wraps
``llama_model_default_params`` of llama-cpp-python's low-level module (which ``Llama.__init__`` calls) to
turn it off, once per process, and only when llama.cpp reports ``AMX_INT8 = 1`` in its system info: on
other CPUs nothing changes, so their replies stay what they were (the extra buffers there are the
weight repacking for AVX2, which is faster and safe).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["amx_in_build", "avoid_amx_weights"]

logger = logging.getLogger(__name__)

AMX_FLAG = "AMX_INT8 = 1"
"""What ``llama_print_system_info`` says when the build uses AMX on this CPU."""


def amx_in_build(system_info: str | None = None) -> bool:
    """Whether llama.cpp uses AMX here (``system_info`` defaults to ``llama_print_system_info()``)."""
    if system_info is None:
        import llama_cpp

        system_info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    return AMX_FLAG in system_info


def _without_extra_buffers(default_params: Callable[[], Any]) -> Callable[[], Any]:
    @functools.wraps(default_params)
    def model_params() -> Any:
        params = default_params()
        params.use_extra_bufts = False
        return params

    model_params.debatecode_without_extra_buffers = True  # type: ignore[attr-defined]
    return model_params


@functools.cache
def avoid_amx_weights() -> bool:
    """Make every ``Llama`` loaded from now on keep its weights out of AMX buffers, if this build uses AMX.

    Returns whether it did (idempotent: the first call decides for the process).
    """
    import llama_cpp.llama_cpp as low_level

    if not amx_in_build():
        return False
    if not getattr(low_level.llama_model_default_params, "debatecode_without_extra_buffers", False):
        low_level.llama_model_default_params = _without_extra_buffers(low_level.llama_model_default_params)
    logger.info("llama.cpp uses AMX on this CPU: loading model weights without its AMX buffers (they crash here)")
    return True
