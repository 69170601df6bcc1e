"""Bandit, through its Python API, on a temporary copy of the code (bandit reads files)."""

from __future__ import annotations

import logging
import tempfile
import threading
import warnings
from collections import Counter
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

from debatecode.quality.report import SecurityFinding, SecurityReport
from debatecode.quality.settings import QualitySettings

__all__ = ["BanditFailed", "bandit_version", "run_bandit"]

logger = logging.getLogger(__name__)

# Bandit keeps module-level state (its plugin manager, its loggers); one scan at a time.
_LOCK = threading.Lock()
_LEVELS = ("LOW", "MEDIUM", "HIGH")


class BanditFailed(Exception):
    """Bandit could not scan the code for a reason other than the code (internal to ``quality``)."""


@cache
def bandit_version() -> str:
    """Bandit's version string."""
    import bandit

    return str(getattr(bandit, "__version__", "unknown"))


@cache
def _bandit_modules() -> tuple[Any, Any]:
    """Bandit's config and manager modules, imported once.

    Raises:
        BanditFailed: bandit is not installed.
    """
    with _LOCK, warnings.catch_warnings():
        # stevedore, which bandit loads its plugins with, warns about an argument bandit still passes.
        warnings.filterwarnings("ignore", message="The verify_requirements argument", category=DeprecationWarning)
        try:
            from bandit.core import config as bandit_config
            from bandit.core import manager
        except ImportError as exc:
            raise BanditFailed(f"bandit is not installed: {exc}") from exc
    return bandit_config, manager


def _finding(issue: Any) -> SecurityFinding:
    from bandit.core import docs_utils

    data = issue.as_dict(with_code=False)
    cwe = (data.get("issue_cwe") or {}).get("id")
    return SecurityFinding(
        test_id=str(data.get("test_id", "")),
        test_name=str(data.get("test_name", "")),
        severity=str(data.get("issue_severity", "UNDEFINED")),
        confidence=str(data.get("issue_confidence", "UNDEFINED")),
        message=str(data.get("issue_text", "")),
        line=data.get("line_number"),
        cwe=int(cwe) if cwe else None,
        more_info=str(docs_utils.get_url(data.get("test_id", ""))),
    )


def run_bandit(code: str, settings: QualitySettings, *, filename: str) -> SecurityReport:
    """Scan ``code`` with every bandit test except ``settings.bandit_skip``.

    The code is written to a temporary file named like ``filename`` (bandit's
    checks look at file names, e.g. for test files) and never executed.

    Raises:
        BanditFailed: bandit is not installed or crashed.
    """
    bandit_config, manager = _bandit_modules()
    name = PurePosixPath(filename).name or "candidate.py"
    with tempfile.TemporaryDirectory(prefix="debatecode-bandit-") as tmp:
        path = Path(tmp) / name
        path.write_text(code, encoding="utf-8")
        try:
            with _LOCK:
                scanner = manager.BanditManager(
                    bandit_config.BanditConfig(),
                    "file",
                    quiet=True,
                    profile={"include": set(), "exclude": set(settings.bandit_skip)},
                    ignore_nosec=not settings.honour_suppressions,
                )
                scanner.discover_files([str(path)])
                scanner.run_tests()
                issues = list(scanner.get_issue_list())
                skipped = list(scanner.skipped)
        except Exception as exc:  # bandit's own failures carry no common base class
            raise BanditFailed(f"bandit failed: {type(exc).__name__}: {exc}") from exc
    findings = sorted((_finding(issue) for issue in issues), key=lambda f: (f.line or 0, f.test_id))
    severities = Counter(f.severity for f in findings)
    confidences = Counter(f.confidence for f in findings)
    return SecurityReport(
        findings=findings,
        by_severity={level: severities.get(level, 0) for level in _LEVELS},
        by_confidence={level: confidences.get(level, 0) for level in _LEVELS},
        skipped=str(skipped[0][1]) if skipped else None,
    )
