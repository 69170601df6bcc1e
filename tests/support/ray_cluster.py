"""``local_ray_cluster``: a real Ray cluster on this machine, for the ``--executor ray`` tests. TEST-ONLY.

Its workers are other processes: ``hook`` (Ray's ``worker_process_setup_hook``) gives each one what
the tests set up in the driver, and the repository is on their path so the hook can be imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.cli.helpers import REPO

__all__ = ["local_ray_cluster"]


@contextmanager
def local_ray_cluster(hook: str) -> Iterator[None]:
    """A local cluster of 2 CPUs, no dashboard, workers' logs kept from the driver; shut down after the block."""
    import ray

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"worker_process_setup_hook": hook, "env_vars": {"PYTHONPATH": str(REPO)}},
    )
    try:
        yield
    finally:
        ray.shutdown()
