"""``debatecode.llm.types`` is the one home of ``Message``, ``PromptStyle`` and ``estimate_tokens``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.support.source_ast import parse_source

import debatecode.agents.prompts
import debatecode.llm
import debatecode.llm.client
from debatecode.llm import types

PACKAGE = Path(debatecode.llm.__file__).resolve().parents[1]
HOME = PACKAGE / "llm" / "types.py"


def test_every_import_path_gives_the_same_object() -> None:
    for module in (debatecode.llm, debatecode.llm.client):
        assert module.Message is types.Message
        assert module.PromptStyle is types.PromptStyle
        assert module.estimate_tokens is types.estimate_tokens
    assert debatecode.agents.prompts.PromptStyle is types.PromptStyle
    assert debatecode.agents.prompts.Message is types.Message


def _definitions(tree: ast.Module) -> set[str]:
    """Names a module defines itself at top level (classes, functions, assignments), not imports."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_no_other_module_defines_them() -> None:
    shared = {"Message", "PromptStyle", "estimate_tokens"}
    copies: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == HOME:
            continue
        relative = path.relative_to(PACKAGE).as_posix()
        copies.extend(
            f"{relative}: {name}" for name in sorted(_definitions(parse_source(path.read_text("utf-8"))) & shared)
        )
    assert not copies, "import these from debatecode.llm.types instead of defining them:\n" + "\n".join(copies)
    assert _definitions(parse_source(HOME.read_text(encoding="utf-8"))) >= shared


def test_estimate_tokens_is_characters_over_four_rounded_up() -> None:
    assert [types.estimate_tokens("x" * n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


def test_the_module_imports_only_the_stdlib_and_typing_extensions() -> None:
    code = (
        "import sys; before = set(sys.modules); import debatecode.llm.types; "
        "heavy = ('pydantic', 'litellm', 'yaml', 'tenacity', 'jinja2', 'debatecode.llm.client', 'debatecode.errors'); "
        "print([m for m in heavy if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
