"""``ClusterUnreachable`` belongs to the one error tree, exits 3, and is still importable from ``bench._ray``."""

from __future__ import annotations

import socket

import pytest

import debatecode.errors
from debatecode.bench import _ray
from debatecode.errors import ClusterUnreachable, DebatecodeError, ExitCode, RunError, UserError


def test_it_is_a_run_failure_of_the_error_tree_with_exit_3() -> None:
    error = ClusterUnreachable("head:6379", "connection refused")
    assert isinstance(error, RunError) and isinstance(error, DebatecodeError) and not isinstance(error, UserError)
    assert error.exit_code == ExitCode.RUN_FAILED == 3
    assert error.address == "head:6379"
    assert "the Ray cluster at head:6379 does not answer (connection refused)" in str(error)
    assert "ClusterUnreachable" in debatecode.errors.__all__
    assert "ClusterUnreachable" in (debatecode.errors.__doc__ or ""), "the tree drawn in the docstring names it"


def test_bench_ray_re_exports_the_same_class() -> None:
    assert _ray.ClusterUnreachable is ClusterUnreachable
    assert "ClusterUnreachable" in _ray.__all__


def test_a_closed_port_is_reported_as_unreachable_without_ray() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    with pytest.raises(ClusterUnreachable) as unreachable:
        _ray._probe(f"127.0.0.1:{port}")
    assert unreachable.value.address == f"127.0.0.1:{port}"
    assert f"127.0.0.1:{port}" in str(unreachable.value)
