"""Imports point down only: no module under ``src/debatecode`` imports from a layer above its own.

Every module is parsed with the stdlib ``ast`` (nothing is imported), and every
import counts wherever it sits: at module level, inside a function, under
``if TYPE_CHECKING:`` or in a ``try``. A type-only import is still a dependency
of the code on the layer above (its annotations, ``get_type_hints`` and mypy all
need that layer), and it is the first step towards a runtime cycle, so it is not
exempt. Module names given as strings to the lazy-export maps and to
``importlib.import_module`` count too: a lazy import is still an import.

Modules in the same layer may import each other. The layers are ``LAYERS``
below, highest first; ``docs/architecture.md`` ("Layers: imports point down
only") draws the same diagram, and a test here keeps the two in step.

Inside a package (a top-level package of ``debatecode`` with its subpackages),
imports form no cycle: ``test_no_import_cycle_inside_a_package`` builds the
graph of every ``import`` statement, wherever it sits (a function-level or
type-only import closes a cycle as well as a module-level one), and fails on
any cycle, naming its edges. Module names given as strings are left out of
that graph: a registry that imports its providers by name on first lookup
(``llm/providers.py``, STYLE.md's registries by name) and a package's lazy
re-export map run after both modules are loaded, and only ever point from the
registry or the package to what it names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from tests.support.source_ast import parse_source

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "debatecode"
DOC = ROOT / "docs" / "architecture.md"

# Each top-level module or package of ``debatecode`` -> its layer; a higher number is a higher layer.
# ``__init__`` is the package's own ``__init__.py`` (the public API, re-exported lazily).
LAYERS: dict[str, int] = {
    "cli": 6,
    "bench": 5,
    "server": 5,
    "__init__": 4,
    "_api": 4,
    "_design_api": 4,
    "protocol": 3,
    "config": 3,
    "agents": 2,
    "memory": 2,
    "hooks": 2,
    "execution": 2,
    "sandbox": 1,
    "llm": 1,
    "store": 1,
    "vcs": 1,
    "quality": 1,
    "voting": 1,
    "topology": 1,
    "task": 1,
    "examples": 1,
    "errors": 0,
    "_lazy": 0,
    "safe_paths": 0,
    "input_files": 0,
    "_concurrency": 0,
}

_MODULE_PATH = re.compile(r"debatecode(\.[A-Za-z_][A-Za-z0-9_]*)+")  # a submodule: a bare "debatecode" may be a label


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    """Whether ``name`` (dotted, under ``debatecode``) is a module or package in the source tree."""
    path = SRC.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _top(name: str) -> str:
    """The top-level module of ``debatecode`` that ``name`` belongs to: its key in ``LAYERS``."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(module: str, is_package: bool, source_text: str, *, by_name: bool = True) -> list[tuple[int, str]]:
    """``(line, module)`` for each ``debatecode`` module that ``module`` (whose source is given) imports.

    ``by_name``: also the module names given as strings to lazy-export maps and ``importlib.import_module``.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(parse_source(source_text, filename=module)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                # ``from debatecode import config`` imports the module ``debatecode.config``.
                submodule = f"{source}.{alias.name}"
                found.append((node.lineno, submodule if _is_module(submodule) else source))
        elif not by_name:
            continue
        elif isinstance(node, ast.Dict):
            # A lazy-export map: ``{"Name": "debatecode.x.y"}``.
            found.extend((value.lineno, value.value) for value in node.values if _names_a_module(value))
        elif isinstance(node, ast.Call) and _called(node) == "import_module":
            found.extend((arg.lineno, arg.value) for arg in node.args if _names_a_module(arg))
    ours = {(line, name) for line, name in found if name == "debatecode" or name.startswith("debatecode.")}
    return sorted(ours)


def _names_a_module(node: ast.expr | None) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _MODULE_PATH.fullmatch(node.value) is not None
        and _is_module(node.value)
    )


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_top_level_module_has_a_layer() -> None:
    tops = {_top(_module_name(path)) for path in _sources()}
    missing = sorted(tops - LAYERS.keys())
    assert not missing, f"give these a layer in LAYERS and in docs/architecture.md: {missing}"


def test_imports_point_down_only() -> None:
    upward: list[str] = []
    for path in _sources():
        module = _module_name(path)
        here = LAYERS.get(_top(module))
        if here is None:
            continue  # test_every_top_level_module_has_a_layer names it
        for line, imported in _imports(module, path.name == "__init__.py", path.read_text(encoding="utf-8")):
            there = LAYERS.get(_top(imported))
            if there is not None and there > here:
                upward.append(
                    f"{module} -> {imported} (layer {here} {_top(module)!r} imports layer {there} {_top(imported)!r})"
                    f"  at {path.relative_to(ROOT)}:{line}"
                )
    assert not upward, f"{len(upward)} upward import(s):\n" + "\n".join(upward)


def _documented_layers() -> list[set[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1]
    block = section.split("```", 2)[1]
    layers = []
    for line in block.splitlines():
        line = re.sub(r"\([^)]*\)", "", line).strip()
        if line:
            layers.append({name.strip().strip("`").removesuffix(".py").rstrip("/") for name in line.split("·")})
    return layers


def test_layers_match_the_architecture_doc() -> None:
    documented = _documented_layers()
    ours = [{name for name, value in LAYERS.items() if value == layer} for layer in sorted(set(LAYERS.values()))]
    assert documented == ours[::-1], "LAYERS and the diagram in docs/architecture.md disagree"


def _package_of(module: str) -> str | None:
    """The top-level package ``module`` belongs to (``debatecode.llm`` for ``debatecode.llm.client``), or None."""
    parts = module.split(".")
    if len(parts) < 2 or not (SRC / "debatecode" / parts[1] / "__init__.py").is_file():
        return None
    return ".".join(parts[:2])


def _package_graphs() -> dict[str, dict[str, dict[str, str]]]:
    """Per package: each module -> each module of the same package it imports -> where (``path:line``)."""
    graphs: dict[str, dict[str, dict[str, str]]] = {}
    for path in _sources():
        module = _module_name(path)
        package = _package_of(module)
        if package is None:
            continue
        edges = graphs.setdefault(package, {}).setdefault(module, {})
        source_text = path.read_text(encoding="utf-8")
        for line, imported in _imports(module, path.name == "__init__.py", source_text, by_name=False):
            if imported != module and _package_of(imported) == package:
                edges.setdefault(imported, f"{path.relative_to(ROOT)}:{line}")
    return graphs


def _cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycle_inside_a_package() -> None:
    problems: list[str] = []
    for package, graph in sorted(_package_graphs().items()):
        for cycle in _cycles(graph):
            edges = [
                f"    {source} -> {target}  at {where}"
                for source in cycle
                for target, where in sorted(graph[source].items())
                if target in cycle
            ]
            problems.append(f"{package}: {' <-> '.join(cycle)}\n" + "\n".join(edges))
    assert not problems, f"{len(problems)} import cycle(s) inside a package:\n" + "\n".join(problems)


def test_a_cycle_is_found_wherever_its_imports_sit() -> None:
    graph = {"a": {"b": "a.py:1"}, "b": {"c": "b.py:9"}, "c": {"a": "c.py:40"}, "d": {"a": "d.py:2"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b": "a.py:1"}, "b": {}}) == []
    function_level = "def f():\n    from debatecode.llm.client import LLMClient"
    assert _imports("debatecode.llm.tokens", False, function_level, by_name=False) == [(2, "debatecode.llm.client")]
    by_name = "_LAZY = {'X': 'debatecode.llm.client'}"
    assert _imports("debatecode.llm.providers", False, by_name, by_name=False) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from debatecode.config import DebateConfig", "debatecode.config"),
        ("from debatecode import config", "debatecode.config"),
        ("from debatecode import __version__", "debatecode"),
        ("import debatecode", "debatecode"),
        ("from ..protocol.state import Turn", "debatecode.protocol.state"),
        ("from . import settings", "debatecode.sandbox.settings"),
        ("if TYPE_CHECKING:\n    from debatecode.protocol import engine", "debatecode.protocol.engine"),
        ("def f():\n    import debatecode.cli.app", "debatecode.cli.app"),
        ("_LAZY = {'X': 'debatecode.protocol.engine'}", "debatecode.protocol.engine"),
        ("importlib.import_module('debatecode.bench.humaneval.run')", "debatecode.bench.humaneval.run"),
    ],
)
def test_every_kind_of_import_is_seen(source: str, expected: str) -> None:
    assert expected in [name for _, name in _imports("debatecode.sandbox.example", False, source)]
