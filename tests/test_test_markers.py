"""The root conftest.py gives every test the markers of what it needs, so that `make test-fast` leaves them out."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest


@dataclass
class FakeItem:
    nodeid: str
    fixturenames: tuple[str, ...] = ()
    module: Any = None
    callspec: Any = None


def _root_conftest() -> ModuleType:
    """The repository's root conftest.py, as pytest loaded it (``import conftest`` may name a subfolder's)."""
    root = Path(__file__).resolve().parents[1] / "conftest.py"
    found = [m for m in sys.modules.values() if isinstance(m, ModuleType) and getattr(m, "__file__", None) == str(root)]
    if found:
        return found[0]
    spec = importlib.util.spec_from_file_location("debatecode_root_conftest", root)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = _root_conftest()


def _markers(item: FakeItem, relpath: str, slow: frozenset[str] = frozenset()) -> set[str]:
    return conftest._auto_markers(item, relpath, slow)  # type: ignore[arg-type]


def test_fixtures_parameters_paths_and_imports_give_markers() -> None:
    plain = FakeItem("tests/x/test_a.py::test_a", ("tmp_path",), SimpleNamespace())
    assert _markers(plain, "tests/x/test_a.py") == set()
    assert _markers(FakeItem("n", ("requires_docker",)), "tests/x/test_a.py") == {"docker"}
    assert _markers(FakeItem("n", ("requires_browser",)), "tests/server/test_b.py") == {"browser"}
    assert _markers(FakeItem("n", ("minilm",)), "tests/memory/test_m.py") == {"local_model"}
    with_backend = FakeItem("n", callspec=SimpleNamespace(params={"backend_id": "docker"}))
    assert _markers(with_backend, "tests/sandbox/test_c.py") == {"docker"}
    with_embedder = FakeItem("n", callspec=SimpleNamespace(params={"embedder_name": "sentence-transformers"}))
    assert _markers(with_embedder, "tests/memory/test_m.py") == {"local_model"}
    assert _markers(FakeItem("n"), "tests-stress/test_s.py") == {"slow"}
    assert _markers(FakeItem("n", module=SimpleNamespace(run_cli=print)), "tests/cli/test_d.py") == {"slow"}
    assert _markers(
        FakeItem("tests/x/test_a.py::test_b"), "tests/x/test_a.py", frozenset({"tests/x/test_a.py::test_b"})
    ) == {"slow"}


def test_the_slow_list_names_only_tests_that_exist() -> None:
    listed = conftest._slow_tests()
    assert listed, "tests/slow-tests.txt is read"
    files = {nodeid.split("::", 1)[0] for nodeid in listed}
    missing = sorted(path for path in files if not (conftest.REPO_ROOT / path).is_file())
    assert not missing, f"tests/slow-tests.txt names files that are gone: {missing}"


def test_every_marker_the_rules_give_is_registered(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":", 1)[0] for line in pytestconfig.getini("markers")}
    given = {
        *conftest.FIXTURE_MARKERS.values(),
        *conftest.PATH_MARKERS.values(),
        *conftest.PARAM_MARKERS.values(),
        *conftest.MODULE_NAME_MARKERS.values(),
        "slow",
    }
    assert given <= registered
