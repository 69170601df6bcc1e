"""Ray's ``worker_process_setup_hook`` for the tests: what their monkeypatches do in the driver, in a worker.

A Ray worker is another process: the scripted models the tests register and the
dummy sandbox they patch in exist there only if this hook puts them there.
"""

from __future__ import annotations

from tests.support import humaneval_scripted, sweep_scripted
from tests.support.dummy_sandbox import DummySandbox

import debatecode.sandbox
from debatecode.llm.scripted import register_scripted
from debatecode.sandbox.settings import SandboxSettings

__all__ = ["HOOK", "prepare_worker"]

HOOK = f"{__name__}.prepare_worker"
"""The hook as Ray's ``runtime_env`` names it."""


def _dummy_sandbox(settings: SandboxSettings, backend: str | None = None) -> DummySandbox:
    return DummySandbox()


def prepare_worker() -> None:
    """Register ``scripted/mixed`` and ``scripted/sweep-scripted``; make every sandbox the tests' dummy one."""
    register_scripted(humaneval_scripted.MODEL, humaneval_scripted.mixed_model())
    register_scripted(sweep_scripted.MODEL, sweep_scripted.sweep_model())
    debatecode.sandbox.create_sandbox = _dummy_sandbox
