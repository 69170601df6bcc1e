"""The in-container side of a test run: set up the repository, then become pytest.

Sent into the instance container as a job file and run as ``python3 -I
_swebench/driver.py`` by the sandbox runner. Standard library only; debatecode
never imports it. In order:

1. Reads ``_swebench/job.json`` (overlay, tests, junit and ledger paths, sys.path entries) and deletes it.
2. Copies the image's repository (``/opt/swebench/repo``, at ``base_commit``) to
   ``<work>/repo`` and applies the overlay there, refusing paths that leave it.
3. Writes the grader plugin's configuration (the junit and ledger paths, sys.path entries)
   to a file the plugin reads and deletes when pytest loads it, before any
   repository code runs; its path goes in ``DEBATECODE_GRADER_CONFIG``.
4. Replaces itself (``execve``) with ``python3 -I -m pytest -p
   debatecode_swebench_grader ...`` in ``<work>/repo``. The sandbox runner,
   outside the test process, reads pytest's own exit status.

``-I`` keeps the working directory and ``PYTHONPATH`` off ``sys.path`` at start-up,
so nothing in the repository (a ``pytest.py``, a ``sitecustomize.py``) can shadow
pytest or run before it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
from typing import Any

IMAGE_REPO = "/opt/swebench/repo"
GRADER_PLUGIN = "debatecode_swebench_grader"
CONFIG_ENV = "DEBATECODE_GRADER_CONFIG"


def _inside(root: str, relpath: str) -> str:
    """The absolute path of ``relpath`` under ``root``; exits when it (or a symlinked parent) leaves ``root``."""
    path = os.path.normpath(os.path.join(root, relpath))
    parent = os.path.realpath(os.path.dirname(path))
    if os.path.isabs(relpath) or not (path.startswith(root + os.sep) and (parent + os.sep).startswith(root + os.sep)):
        raise SystemExit(f"debatecode driver: refused overlay path {relpath!r}")
    return path


def apply_overlay(repo: str, entries: list[dict[str, Any]]) -> None:
    """Write, link or delete each overlay entry under ``repo``."""
    for entry in entries:
        path = _inside(repo, entry["path"])
        if os.path.islink(path) or os.path.isfile(path):
            os.unlink(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)
        if entry["op"] == "delete":
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = base64.b64decode(entry["data"])
        if entry["op"] == "symlink":
            os.symlink(data.decode("utf-8", "surrogateescape"), path)
            continue
        with open(path, "wb") as handle:
            handle.write(data)
        os.chmod(path, int(entry.get("mode", 0o644)))


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    work = os.path.dirname(here)
    job_path = os.path.join(here, "job.json")
    with open(job_path, encoding="utf-8") as handle:
        job = json.load(handle)
    os.unlink(job_path)
    repo = os.path.join(work, "repo")
    shutil.copytree(IMAGE_REPO, repo, symlinks=True)
    apply_overlay(repo, job["overlay"])
    pythonpath = job.get("pythonpath")
    if pythonpath is None:
        pythonpath = ["."] + (["src"] if os.path.isdir(os.path.join(repo, "src")) else [])
    config_path = os.path.join(here, "grader.json")
    with open(config_path, "w", encoding="utf-8") as handle:
        json.dump(
            {
                "junit": os.path.join(work, job["junit"]),
                "ledger": os.path.join(work, job["ledger"]),
                "repo": repo,
                "pythonpath": [os.path.normpath(os.path.join(repo, entry)) for entry in pythonpath],
            },
            handle,
        )
    argv = [
        sys.executable,
        "-I",
        "-m",
        "pytest",
        "-p",
        GRADER_PLUGIN,
        "--rootdir",
        repo,
        "-rA",
        "--tb=short",
        "--color=no",
        "-p",
        "no:cacheprovider",
        "-o",
        "junit_family=xunit1",
        *job["tests"],
    ]
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        CONFIG_ENV: config_path,
    }
    os.chdir(repo)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)


if __name__ == "__main__":
    main()
