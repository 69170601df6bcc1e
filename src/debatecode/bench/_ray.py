"""``--executor ray``: benchmark items as Ray tasks, on a Ray instance of this machine or on a cluster.

The ``debatecode`` process is Ray's driver. Each ``WorkItem`` becomes one Ray
task running ``run_item``: the worker validates the item's config (sent as
``config.model_dump(mode="json")``), builds services of its own from it
(``worker_services``: a model client, a sandbox, a store, as the driver would),
computes the item and returns its record. The record comes back to the driver's
event loop, which alone appends it to the results files (``Executor.run``), so a
killed driver loses only the items in flight, as with the local executor.

- **Where:** no ``--ray-address`` (and no ``RAY_ADDRESS``) starts a Ray instance on
  this machine for the run and stops it after. An address (``auto``, ``HOST:6379``
  on a cluster node, ``ray://HOST:10001`` with Ray Client) joins that cluster. A
  Ray already initialised in this process (a notebook's ``ray.init()``) is used as
  it is, and left running.
- **Calls without services:** ``RayExecutor.call(fn, kwargs)`` runs a top-level
  ``async def fn(**kwargs)`` as a Ray task (``run_call``) that builds no services,
  for work that needs no model client, sandbox or store of the config's (SWE-bench
  grading, ``debatecode.bench.swebench.remote``), with the same errors as ``compute``.
- **Store:** workers write their sessions to the config's ``store_url``. SQLite is
  fine on this machine's own Ray instance: the workers share the file (WAL mode,
  a busy timeout, ``BEGIN IMMEDIATE`` writers, ``debatecode.store.repository``).
  With an address the workers may be on other machines, where a SQLite path is
  another file or none, so the run is refused with a ``ConfigError``: use a shared
  PostgreSQL ``store_url``. The driver opens each store once before the first task
  (migrating it), so no two workers race to create its tables.
- **How many at once:** ``--jobs N`` tasks at most in flight; by default the
  cluster's CPU count, each task reserving one CPU. A ``local/...`` model is loaded
  by each Ray worker process for itself, and llama.cpp uses every core of its node,
  so with one each task reserves a whole node (the smallest node's CPUs) and the
  default is one task per node.
- **Errors:** Ray is imported only here (``import_ray``); without it the run stops
  with ``ConfigError`` naming the ``[ray]`` extra (exit 2). An address that does
  not answer within ``CONNECT_TIMEOUT_S`` raises ``ClusterUnreachable`` (exit 3; it
  lives in ``debatecode.errors`` and is re-exported here). A ``DebatecodeError``
  raised in a task is re-raised as it is; any other failure of a task, its worker
  or its node is a ``RunError``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from debatecode.bench._jobs import RAY, Executor, Work, WorkItem, uses_local_model
from debatecode.config import DebateConfig
from debatecode.errors import ClusterUnreachable, ConfigError, DebatecodeError, RunError

if TYPE_CHECKING:
    from debatecode.protocol.services import Services

__all__ = [
    "CONNECT_TIMEOUT_S",
    "INSTALL_HINT",
    "ClusterUnreachable",
    "RayExecutor",
    "import_ray",
    "run_call",
    "run_item",
    "worker_services",
]

logger = logging.getLogger(__name__)

INSTALL_HINT = "install the [ray] extra: pip install 'debatecode[ray]'"
CONNECT_TIMEOUT_S = 5.0
"""How long the driver waits for a ``--ray-address`` to accept a connection before giving up."""

_GCS_PORT = 6379
_CLIENT_PORT = 10001
_CLIENT_SCHEME = "ray://"
_FOUND_BY_RAY = ("auto", "local")
"""Addresses Ray resolves itself (from this machine's running instance), with nothing to probe."""


def import_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        ConfigError: Ray is not installed (the message names the ``[ray]`` extra).
    """
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"--executor ray needs Ray, which is not installed here: {INSTALL_HINT}") from exc
    return ray


# -- the worker's side ---------------------------------------------------------------------------------


def worker_services(config: DebateConfig) -> Services:
    """The services one task runs with: a model client (with the config's token budget), a sandbox, a store.

    Raises:
        UnknownModelError, ConfigError, SandboxUnavailable, StoreError: as ``build_services``.
    """
    from debatecode.llm.client import LLMClient, validate_model
    from debatecode.protocol.services import Services
    from debatecode.sandbox import create_sandbox
    from debatecode.store import open_store

    validate_model(config.model)
    sandbox = create_sandbox(config.sandbox, config.sandbox.backend)
    store = open_store(config.store_url)
    return Services(llm=LLMClient(config.llm, token_budget=config.token_budget), sandbox=sandbox, store=store)


def run_item(work: Work, config: Mapping[str, Any], args: Mapping[str, Any]) -> Any:
    """The body of one Ray task: build this worker's services from ``config``, compute the item, close them.

    A top-level function, so that Ray sends it (and ``work``) by reference, not by value.

    Raises:
        Whatever ``work`` or ``worker_services`` raised; Ray hands it to the driver.
    """
    settings = DebateConfig.model_validate(dict(config))

    async def compute() -> Any:
        async with worker_services(settings) as services:
            return await work(services, settings, **args)

    return asyncio.run(compute())


def run_call(fn: Callable[..., Awaitable[Any]], kwargs: Mapping[str, Any]) -> Any:
    """The body of a Ray task that builds no services: ``await fn(**kwargs)`` on a new event loop.

    ``fn`` is a top-level ``async def`` (Ray sends it by reference); ``kwargs`` are plain data.

    Raises:
        Whatever ``fn`` raised; Ray hands it to the driver.
    """

    async def compute() -> Any:
        return await fn(**kwargs)

    return asyncio.run(compute())


# -- the driver's side ---------------------------------------------------------------------------------


def _is_sqlite(url: str) -> bool:
    return url.split(":", 1)[0].split("+", 1)[0] == "sqlite"


def _endpoint(address: str) -> tuple[str, int] | None:
    """The host and port to probe for ``address``; None for addresses Ray finds itself (``auto``)."""
    if address in _FOUND_BY_RAY:
        return None
    default = _GCS_PORT
    if address.startswith(_CLIENT_SCHEME):
        address, default = address.removeprefix(_CLIENT_SCHEME), _CLIENT_PORT
    host, sep, port = address.rstrip("/").rpartition(":")
    if not sep or not port.isdigit():
        return address.rstrip("/"), default
    return host.strip("[]"), int(port)


def _probe(address: str) -> None:
    """Fail fast when ``address`` refuses or ignores a TCP connection (Ray itself would wait for minutes)."""
    endpoint = _endpoint(address)
    if endpoint is None:
        return
    try:
        with socket.create_connection(endpoint, timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise ClusterUnreachable(address, f"{endpoint[0]}:{endpoint[1]}: {exc.strerror or exc}") from exc


def _connect(ray: ModuleType, address: str | None) -> None:
    """``ray.init`` on ``address``, or on a new instance of this machine; Ray's failures translated."""
    if address is None:
        ray.init(include_dashboard=False, log_to_driver=False)
        return
    _probe(address)
    try:
        ray.init(address=address, log_to_driver=False)
    except ValueError as exc:  # e.g. a ray:// address without Ray Client installed
        raise ConfigError(f"--ray-address {address}: {exc}") from exc
    except (ConnectionError, TimeoutError, RuntimeError) as exc:
        raise ClusterUnreachable(address, str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)) from exc


def _alive_node_cpus(ray: ModuleType) -> list[int]:
    return [int(node["Resources"].get("CPU", 0)) for node in ray.nodes() if node.get("Alive")]


class RayExecutor(Executor):
    """Items as Ray tasks, ``jobs`` at most in flight, each reserving ``cpus_per_task`` CPUs (see the module).

    Make one with ``connect``; ``aclose`` stops the Ray instance if ``connect`` started it.
    """

    name = RAY

    def __init__(self, ray: ModuleType, jobs: int, *, cpus_per_task: int = 1, owns_ray: bool = False) -> None:
        if jobs < 1:
            raise ConfigError(f"--jobs must be at least 1, got {jobs}")
        self.jobs = jobs
        self.cpus_per_task = cpus_per_task
        self._ray = ray
        self._owns_ray = owns_ray
        self._task: Any = ray.remote(run_item).options(num_cpus=cpus_per_task)
        self._call_task: Any = ray.remote(run_call).options(num_cpus=cpus_per_task)

    @classmethod
    def connect(
        cls, configs: Sequence[DebateConfig], *, jobs: int | None, address: str | None, uses_store: bool = True
    ) -> RayExecutor:
        """Check ``configs`` for a cluster, join (or start) Ray, and migrate their stores once.

        ``address`` falls back to ``RAY_ADDRESS``; without either a Ray instance of
        this machine is started. ``jobs`` defaults to the cluster's CPUs, or to its
        nodes with a ``local/...`` model (see the module). ``uses_store=False`` is for
        runs whose tasks open no store (SWE-bench grading and solving): their
        ``store_url`` is neither checked nor opened. ``configs`` may be empty (grading
        runs no model).

        Raises:
            ConfigError: Ray is not installed; a SQLite ``store_url`` with an address;
                ``jobs`` below 1; an address Ray cannot use.
            UnknownModelError: a config's model no provider answers to.
            ClusterUnreachable: the address does not answer.
            StoreError: a store cannot be opened.
        """
        from debatecode.llm.client import validate_model
        from debatecode.store import open_store

        if jobs is not None and jobs < 1:
            raise ConfigError(f"--jobs must be at least 1, got {jobs}")
        ray = import_ray()
        target = address or os.environ.get("RAY_ADDRESS") or None
        for config in configs:
            validate_model(config.model)
            if uses_store and target is not None and _is_sqlite(config.store_url):
                raise ConfigError(
                    f"--executor ray with a cluster ({target}) needs a store every node shares, "
                    f"not the SQLite file {config.store_url}: set store_url to a PostgreSQL URL "
                    "(postgresql+psycopg://user:password@host/db) reachable from every node",
                    key="store_url",
                )
        owns_ray = not ray.is_initialized()
        if owns_ray:
            _connect(ray, target)
        elif address is not None:
            logger.warning("ray: already initialised in this process, so --ray-address %s is not used", address)
        try:
            for url in dict.fromkeys(config.store_url for config in configs if uses_store):
                open_store(url).close()
            node_cpus = _alive_node_cpus(ray) or [1]
            local_model = any(uses_local_model(config) for config in configs)
            cpus_per_task = max(1, min(node_cpus)) if local_model else 1
            if jobs is None:
                jobs = len(node_cpus) if local_model else max(1, int(ray.cluster_resources().get("CPU", 1)))
            executor = cls(ray, jobs, cpus_per_task=cpus_per_task, owns_ray=owns_ray)
        except BaseException:
            if owns_ray:
                ray.shutdown()
            raise
        logger.info(
            "ray: %d node(s), %d CPU(s) each at least; %d task(s) at once, %d CPU(s) per task",
            len(node_cpus),
            min(node_cpus),
            jobs,
            cpus_per_task,
        )
        return executor

    def _payload(self, config: DebateConfig) -> dict[str, Any]:
        """``config`` as JSON, its output folder absolute (a worker's working directory may differ)."""
        payload = config.model_dump(mode="json")
        payload["out"] = str(Path(config.out).absolute())
        return payload

    async def compute(self, item: WorkItem) -> Any:
        ref = self._task.remote(item.work, self._payload(item.config), dict(item.args))
        return await self._result(ref, item.label)

    async def call(self, fn: Callable[..., Awaitable[Any]], kwargs: Mapping[str, Any], *, label: str = "") -> Any:
        """``await fn(**kwargs)`` as a Ray task that builds no services (``run_call``); its return value.

        ``fn`` must be a top-level ``async def`` and ``kwargs`` plain data. Treat what it
        returns as untrusted input: it comes from another process, maybe another machine.

        Raises:
            Whatever ``fn`` raised, when a ``DebatecodeError``; else ``RunError`` (the task,
            its worker or its node failed).
        """
        return await self._result(self._call_task.remote(fn, dict(kwargs)), label)

    async def _result(self, ref: Any, label: str) -> Any:
        """The value of the task ``ref``, its failures translated (see ``compute``)."""
        ray = self._ray
        try:
            return await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            ray.cancel(ref)
            raise
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, DebatecodeError):
                raise cause from exc
            raise RunError(f"{label or 'a benchmark item'}: its Ray task failed: {cause!r}") from exc
        except ray.exceptions.RayError as exc:
            raise RunError(f"{label or 'a benchmark item'}: Ray lost its task ({type(exc).__name__}: {exc})") from exc

    async def aclose(self) -> None:
        """Stop the Ray instance ``connect`` started (a cluster joined is only disconnected from)."""
        if self._owns_ray and self._ray.is_initialized():
            self._ray.shutdown()
        self._owns_ray = False
