"""``analyze()``: run ruff, radon and bandit on one code version and score it.

Everything here is static analysis on the host: the candidate's code is read,
parsed and linted, never imported or executed. Ruff runs as its own binary on
stdin; radon and bandit run in-process through their Python APIs.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from debatecode.quality._bandit import BanditFailed, bandit_version, run_bandit
from debatecode.quality._radon import run_radon
from debatecode.quality._ruff import RuffFailed, ruff_version, run_ruff
from debatecode.quality.report import ComplexityReport, LintReport, QualityReport, SecurityReport
from debatecode.quality.score import (
    combine,
    complexity_subscore,
    lint_subscore,
    maintainability_subscore,
    security_subscore,
)
from debatecode.quality.settings import QualitySettings

__all__ = ["analyze", "analyze_async"]

logger = logging.getLogger(__name__)

DEFAULT_FILENAME = "candidate.py"
CACHE_SIZE = 256
"""How many measured code versions ``analyze`` keeps, so a repeated version is not measured again."""


def _parse_error(code: str, filename: str) -> str | None:
    try:
        ast.parse(code, filename=filename)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except ValueError as exc:  # e.g. null bytes in the source
        return str(exc)
    return None


def _radon_version() -> str:
    import radon

    return str(getattr(radon, "__version__", "unknown"))


def analyze(
    code: str,
    *,
    test_pass_rate: float | None,
    settings: QualitySettings | None = None,
    filename: str = DEFAULT_FILENAME,
    cwd: Path | None = None,
) -> QualityReport:
    """Measure one code version with ruff, radon and bandit, and score it (0-1).

    ``test_pass_rate`` (0-1) is the share of the task's tests the code passes,
    or None when it was not run; its weight is then left out of the score.
    ``filename`` is the name the tools see (ruff picks rules and, with
    ``ruff_config="project"``, its configuration by it; relative to ``cwd``).

    Code that does not parse scores 0 on format, complexity, maintainability
    and security, and its ``parse_error`` says why. A tool that fails to run
    is recorded in ``tool_errors`` and its sub-scores are left out.

    The tools' findings for a code version are kept in process (the latest
    ``CACHE_SIZE``), so the same code, file name and settings are measured
    once; the score is still computed from this call's ``test_pass_rate``.

    Raises:
        ValueError: ``test_pass_rate`` is outside 0-1.
    """
    _check_rate(test_pass_rate)
    settings = settings or QualitySettings()
    started = time.perf_counter()
    return _scored(_measure_cached(code, settings, filename, cwd), test_pass_rate, settings, started)


def _check_rate(test_pass_rate: float | None) -> None:
    if test_pass_rate is not None and not 0.0 <= test_pass_rate <= 1.0:
        raise ValueError(f"test_pass_rate must be between 0 and 1, got {test_pass_rate}")


def _scored(
    measured: _Measurement, test_pass_rate: float | None, settings: QualitySettings, started: float
) -> QualityReport:
    """The report of one measurement, scored with this call's ``test_pass_rate``."""
    components = dict(measured.components)
    if test_pass_rate is not None:
        components["tests"] = test_pass_rate
    components = {name: round(components[name], 4) for name in settings.weights() if name in components}
    return QualityReport(
        score=round(combine(components, settings), 4),
        components=components,
        weights=settings.weights(),
        test_pass_rate=test_pass_rate,
        lint=measured.lint,
        complexity=measured.complexity,
        security=measured.security,
        parse_error=measured.parse_error,
        tool_errors=dict(measured.tool_errors),
        tools={"ruff": ruff_version(), "radon": _radon_version(), "bandit": bandit_version()},
        duration_s=round(time.perf_counter() - started, 4),
    )


@dataclass(frozen=True, slots=True)
class _Measurement:
    """What the tools said about one code version, and the sub-scores other than ``tests``."""

    lint: LintReport
    complexity: ComplexityReport
    security: SecurityReport
    parse_error: str | None
    tool_errors: dict[str, str]
    components: dict[str, float]

    def copy(self) -> _Measurement:
        """A copy whose reports the caller may change without touching the cached one."""
        return _Measurement(
            self.lint.model_copy(deep=True),
            self.complexity.model_copy(deep=True),
            self.security.model_copy(deep=True),
            self.parse_error,
            dict(self.tool_errors),
            dict(self.components),
        )


class _MeasurementCache:
    """The latest measurements by (code sha256, file name, folder, settings), least recently used dropped first.

    Thread-safe: ``analyze_async`` runs in worker threads.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[str, ...], _Measurement] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> _Measurement | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
        return found.copy() if found is not None else None

    def put(self, key: tuple[str, ...], measured: _Measurement) -> None:
        with self._lock:
            self._entries[key] = measured.copy()
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_CACHE = _MeasurementCache(CACHE_SIZE)


def _cache_key(code: str, settings: QualitySettings, filename: str, cwd: Path | None) -> tuple[str, ...] | None:
    """The cache key of a measurement, or None when it must not be cached (a project ruff configuration)."""
    if settings.ruff_config != "builtin":
        return None
    digest = hashlib.sha256(code.encode("utf-8", errors="surrogatepass")).hexdigest()
    return (digest, filename, str(cwd or ""), settings.model_dump_json())


def _measure_cached(code: str, settings: QualitySettings, filename: str, cwd: Path | None) -> _Measurement:
    """``_measure``, answered from the cache for a code version measured before with the same settings.

    Only the built-in ruff configuration is cached: with ``ruff_config="project"``
    the result also depends on configuration files that may change. A
    measurement with a tool error is not kept, so the next call tries again.
    """
    key = _cache_key(code, settings, filename, cwd)
    if key is None:
        return _measure(code, settings, filename, cwd)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    measured = _measure(code, settings, filename, cwd)
    if not measured.tool_errors:
        _CACHE.put(key, measured)
    return measured


def _measure(code: str, settings: QualitySettings, filename: str, cwd: Path | None) -> _Measurement:
    """Run ruff, radon and bandit on ``code`` and turn their findings into sub-scores."""
    components: dict[str, float] = {}
    tool_errors: dict[str, str] = {}
    lint = LintReport()
    try:
        lint = run_ruff(code, settings, filename=filename, cwd=cwd)
        components["lint"] = lint_subscore(lint, settings)
        if lint.formatted is not None:
            components["format"] = 1.0 if lint.formatted else 0.0
    except RuffFailed as exc:
        logger.warning("ruff could not analyse %s: %s", filename, exc)
        tool_errors["ruff"] = str(exc)

    parse_error = _parse_error(code, filename)
    complexity = ComplexityReport()
    security = SecurityReport()
    if parse_error is not None:
        components.update(complexity=0.0, maintainability=0.0, security=0.0)
        components.setdefault("format", 0.0)
    else:
        try:
            complexity = run_radon(code)
            components["complexity"] = complexity_subscore(complexity, settings)
            maintainability = maintainability_subscore(complexity)
            if maintainability is not None:
                components["maintainability"] = maintainability
        except (SyntaxError, ValueError, RecursionError) as exc:  # radon's own parse of exotic code
            logger.warning("radon could not analyse %s: %s", filename, exc)
            tool_errors["radon"] = f"{type(exc).__name__}: {exc}"
        try:
            security = run_bandit(code, settings, filename=filename)
            components["security"] = security_subscore(security, settings)
        except BanditFailed as exc:
            logger.warning("bandit could not analyse %s: %s", filename, exc)
            tool_errors["bandit"] = str(exc)
    return _Measurement(lint, complexity, security, parse_error, tool_errors, components)


async def analyze_async(
    code: str,
    *,
    test_pass_rate: float | None,
    settings: QualitySettings | None = None,
    filename: str = DEFAULT_FILENAME,
    cwd: Path | None = None,
) -> QualityReport:
    """``analyze`` in a worker thread, so the event loop keeps serving other agents.

    A code version measured before is scored on the calling thread: no tool
    runs, so a thread would only add its hand-over.

    Raises:
        ValueError: ``test_pass_rate`` is outside 0-1.
    """
    _check_rate(test_pass_rate)
    started = time.perf_counter()
    chosen = settings or QualitySettings()
    key = _cache_key(code, chosen, filename, cwd)
    cached = _CACHE.get(key) if key is not None else None
    if cached is not None:
        return _scored(cached, test_pass_rate, chosen, started)
    return await asyncio.to_thread(
        analyze, code, test_pass_rate=test_pass_rate, settings=settings, filename=filename, cwd=cwd
    )
