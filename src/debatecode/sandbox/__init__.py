"""Sandboxes: where LLM-written code runs, under limits, isolated from the host.

Backends are chosen by name (``docker``, ``local``, ``auto``) through
``create_sandbox``. Everything except the contract in ``base`` is imported on
first use, so importing this package never loads the Docker SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from debatecode._lazy import lazy_exports
from debatecode.sandbox.base import ExecJob, ExecResult, Limits, Sandbox

if TYPE_CHECKING:
    from debatecode.sandbox.checks import CheckJob, CheckResult, run_checks
    from debatecode.sandbox.docker import DockerSandbox
    from debatecode.sandbox.local import LocalSandbox
    from debatecode.sandbox.registry import BackendStatus, create_sandbox, default_limits, describe_backends
    from debatecode.sandbox.results import TestCaseResult, TestOutcome

__all__ = [
    "BackendStatus",
    "CheckJob",
    "CheckResult",
    "DockerSandbox",
    "ExecJob",
    "ExecResult",
    "Limits",
    "LocalSandbox",
    "Sandbox",
    "TestCaseResult",
    "TestOutcome",
    "create_sandbox",
    "default_limits",
    "describe_backends",
    "run_checks",
]

_LAZY = {
    "BackendStatus": "debatecode.sandbox.registry",
    "CheckJob": "debatecode.sandbox.checks",
    "CheckResult": "debatecode.sandbox.checks",
    "TestCaseResult": "debatecode.sandbox.results",
    "TestOutcome": "debatecode.sandbox.results",
    "run_checks": "debatecode.sandbox.checks",
    "DockerSandbox": "debatecode.sandbox.docker",
    "LocalSandbox": "debatecode.sandbox.local",
    "create_sandbox": "debatecode.sandbox.registry",
    "default_limits": "debatecode.sandbox.registry",
    "describe_backends": "debatecode.sandbox.registry",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
