"""Ruff, run as its own binary on stdin: lint findings by rule and the format check."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

from debatecode.quality.report import LintFinding, LintReport
from debatecode.quality.settings import QualitySettings

__all__ = ["RuffFailed", "ruff_version", "run_ruff"]

_DIFF_CAP = 8000


class RuffFailed(Exception):
    """Ruff could not run or answered with something other than findings (internal to ``quality``)."""


@cache
def _ruff_command() -> tuple[str, ...]:
    """The ruff binary shipped with the ``ruff`` package, or ``python -m ruff`` as a fallback."""
    try:
        from ruff.__main__ import find_ruff_bin

        return (str(find_ruff_bin()),)
    except (ImportError, FileNotFoundError):
        return (sys.executable, "-m", "ruff")


@cache
def ruff_version() -> str:
    """Ruff's version string, or ``unknown``."""
    try:
        proc = subprocess.run([*_ruff_command(), "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return proc.stdout.strip().removeprefix("ruff ").strip() or "unknown"


def _run(args: list[str], code: str, settings: QualitySettings, cwd: Path | None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*_ruff_command(), *args],
            input=code,
            capture_output=True,
            text=True,
            timeout=settings.tool_timeout_s,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuffFailed(f"ruff {args[0]} took longer than {settings.tool_timeout_s:g}s") from exc
    except OSError as exc:
        raise RuffFailed(f"cannot run ruff: {exc}") from exc


def _config_args(settings: QualitySettings) -> list[str]:
    if settings.ruff_config == "project":
        return []
    return ["--isolated", "--line-length", str(settings.line_length)]


def run_ruff(code: str, settings: QualitySettings, *, filename: str, cwd: Path | None = None) -> LintReport:
    """Lint ``code`` and check its formatting with ruff, reading it from stdin as ``filename``.

    Raises:
        RuffFailed: ruff is missing, timed out, or failed on something other than the code.
    """
    check_args = ["check", "--no-cache", "--output-format", "json", *_config_args(settings)]
    if settings.ruff_config == "builtin":
        check_args += ["--select", ",".join(settings.ruff_select)]
    if not settings.honour_suppressions:
        check_args.append("--ignore-noqa")
    proc = _run([*check_args, "--stdin-filename", filename, "-"], code, settings, cwd)
    if proc.returncode not in (0, 1):
        raise RuffFailed(f"ruff check exited with {proc.returncode}: {proc.stderr.strip()[:500]}")
    try:
        diagnostics = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise RuffFailed(f"ruff check printed no JSON: {proc.stdout[:200]!r}") from exc
    findings = [
        LintFinding(
            rule=str(item.get("code") or item.get("name") or "invalid-syntax"),
            name=str(item.get("name") or ""),
            message=str(item.get("message", "")),
            line=(item.get("location") or {}).get("row"),
            column=(item.get("location") or {}).get("column"),
            fixable=item.get("fix") is not None,
        )
        for item in diagnostics
    ]
    findings.sort(key=lambda f: (f.line or 0, f.column or 0, f.rule))
    fmt = _run(["format", "--diff", *_config_args(settings), "--stdin-filename", filename, "-"], code, settings, cwd)
    formatted: bool | None
    if fmt.returncode == 0:
        formatted, diff = True, ""
    elif fmt.returncode == 1:
        formatted, diff = False, fmt.stdout
    elif any(f.rule == "invalid-syntax" for f in findings):
        formatted, diff = None, ""
    else:
        raise RuffFailed(f"ruff format exited with {fmt.returncode}: {fmt.stderr.strip()[:500]}")
    return LintReport(
        findings=findings,
        by_rule=dict(sorted(Counter(f.rule for f in findings).items())),
        formatted=formatted,
        format_diff=diff[:_DIFF_CAP],
    )
