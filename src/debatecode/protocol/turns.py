"""Temporary alias of :mod:`debatecode.protocol.session_run` while the design modules move their imports."""

from __future__ import annotations

from debatecode.protocol.session_run import LoopState, SessionRun, gather_all

__all__ = ["LoopState", "SessionRun", "gather_all"]
