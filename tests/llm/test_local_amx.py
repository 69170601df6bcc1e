"""The AMX guard: weights stay out of llama.cpp's AMX buffers only where the build uses AMX."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from debatecode.llm import local_amx

AMX_INFO = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | REPACK = 1 | "
PLAIN_INFO = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | REPACK = 1 | "


def test_amx_in_build_reads_the_flag_llama_cpp_reports() -> None:
    assert local_amx.amx_in_build(AMX_INFO)
    assert not local_amx.amx_in_build(PLAIN_INFO)
    assert not local_amx.amx_in_build("CPU : AMX_INT8 = 0 | ")


@pytest.fixture
def fake_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """A stand-in for llama-cpp-python's low-level module, whose default model params can be inspected."""
    low_level = types.ModuleType("llama_cpp.llama_cpp")

    def llama_model_default_params() -> Any:
        return SimpleNamespace(use_extra_bufts=True, n_gpu_layers=0)

    low_level.llama_model_default_params = llama_model_default_params  # type: ignore[attr-defined]
    package = types.ModuleType("llama_cpp")
    package.llama_cpp = low_level  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", package)
    monkeypatch.setitem(sys.modules, "llama_cpp.llama_cpp", low_level)
    local_amx.avoid_amx_weights.cache_clear()
    yield low_level
    local_amx.avoid_amx_weights.cache_clear()


def test_with_amx_every_later_load_gets_no_extra_buffers(
    fake_llama_cpp: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_amx, "amx_in_build", lambda system_info=None: True)
    assert local_amx.avoid_amx_weights() is True
    params = fake_llama_cpp.llama_model_default_params()
    assert params.use_extra_bufts is False
    assert params.n_gpu_layers == 0  # the rest of llama.cpp's defaults are kept


def test_the_wrapper_is_installed_once_even_when_asked_again(
    fake_llama_cpp: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_amx, "amx_in_build", lambda system_info=None: True)
    local_amx.avoid_amx_weights()
    wrapped = fake_llama_cpp.llama_model_default_params
    local_amx.avoid_amx_weights.cache_clear()
    local_amx.avoid_amx_weights()
    assert fake_llama_cpp.llama_model_default_params is wrapped
    assert wrapped.__wrapped__.__name__ == "llama_model_default_params"  # type: ignore[attr-defined]
    assert not hasattr(wrapped.__wrapped__, "__wrapped__")


def test_without_amx_nothing_changes(fake_llama_cpp: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    original = fake_llama_cpp.llama_model_default_params
    monkeypatch.setattr(local_amx, "amx_in_build", lambda system_info=None: False)
    assert local_amx.avoid_amx_weights() is False
    assert fake_llama_cpp.llama_model_default_params is original
    assert fake_llama_cpp.llama_model_default_params().use_extra_bufts is True
