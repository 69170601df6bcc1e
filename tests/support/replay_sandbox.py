"""``ReplaySandbox``: runs each distinct job once in an inner sandbox, then replays its result. TEST-ONLY.

Load tests run the same scripted debate many times; every copy sends the
sandbox the same jobs, which differ only in the checker's per-job nonce (see
``debatecode.sandbox.verdict``). Running each of them for real would measure
the host's process start-up, not the engine. This sandbox keys a job on its
content without the nonce file, runs the first job of each key in ``inner``
(the ``DummySandbox`` by default) and answers later ones with that result, its
old nonce swapped for the new one, so the verdict reads exactly as a real run
of the same code would. Concurrent jobs of one key wait for the first run.

Only sound for deterministic jobs (scripted debates of fixed code): a job whose
outcome could change from run to run must not be replayed.
"""

from __future__ import annotations

import asyncio

from tests.support.dummy_sandbox import DummySandbox

from debatecode.sandbox.base import ExecJob, ExecResult, Sandbox
from debatecode.sandbox.verdict import NONCE_FILE

__all__ = ["ReplaySandbox"]


JobKey = tuple[object, ...]


def _job_key(job: ExecJob) -> JobKey:
    """Everything in ``job`` but its nonce, as a dict key.

    A tuple of the texts themselves, not a digest: a string caches its hash, and
    the checker's large files are the same string objects in every job, so the
    key costs next to nothing (a digest of them costs about a millisecond a job).
    """
    files = tuple(sorted((path, text) for path, text in job.files.items() if path != NONCE_FILE))
    return files, tuple(job.argv), tuple(sorted(job.env.items())), tuple(job.collect), job.limits


class ReplaySandbox(Sandbox):
    """Runs each distinct job once in ``inner`` and replays its result for identical jobs. For tests only."""

    name = "replay"

    def __init__(self, inner: Sandbox | None = None) -> None:
        self.inner = inner or DummySandbox()
        self.runs = 0
        """Jobs really run in ``inner``."""
        self.replays = 0
        """Jobs answered from an earlier run."""
        self._results: dict[JobKey, tuple[ExecResult, str]] = {}
        self._locks: dict[JobKey, asyncio.Lock] = {}

    async def run(self, job: ExecJob) -> ExecResult:
        key = _job_key(job)
        nonce = job.files.get(NONCE_FILE, "")
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            known = self._results.get(key)
            if known is None:
                result = await self.inner.run(job)
                self.runs += 1
                self._results[key] = (result, nonce)
                return result
        self.replays += 1
        result, old_nonce = known
        if not old_nonce or not nonce:
            return result.model_copy()
        return result.model_copy(update={"stdout": result.stdout.replace(old_nonce, nonce)})

    async def aclose(self) -> None:
        await self.inner.aclose()
