"""What every challenge shares: the real console script, a scratch folder, and checks that say what failed."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXE = Path(sys.executable).with_name("debatecode")
POSTGRES_URL_ENV = "DEBATECODE_TEST_POSTGRES_URL"
"""Names the PostgreSQL server the challenges that need one make their databases on (``bash .ci/run`` sets it)."""


class ChallengeFailed(AssertionError):
    """A check of a challenge did not hold; the message says which and shows the evidence."""


def user_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A user's environment: no ``DEBATECODE_*`` settings from the caller, a plain wide terminal, then ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"})
    env.update(extra or {})
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Journey:
    """A scratch folder and a log of the commands a challenge ran, for the failure report."""

    workdir: Path
    log: list[str] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)

    def cli(
        self, *args: str, cwd: Path | None = None, timeout: float = 600, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``debatecode ARGS`` as a user would, with a plain, wide terminal (and ``env`` on top)."""
        self.log.append(_shown(("debatecode", *args), env))
        entry, started = len(self.log) - 1, time.monotonic()
        with subprocess.Popen(
            [str(EXE), *args],
            cwd=cwd or self.workdir,
            env=user_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as proc:
            self.pids.append(proc.pid)
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
        self.log[entry] += f"  # exit {proc.returncode} after {time.monotonic() - started:.1f}s"
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def run(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run any other program (git, docker) in the scratch folder."""
        self.log.append("$ " + shlex.join(argv))
        return subprocess.run(list(argv), cwd=cwd or self.workdir, capture_output=True, text=True, timeout=300)

    @contextmanager
    def background(
        self, *args: str, name: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> Iterator[subprocess.Popen[bytes]]:
        """``debatecode ARGS`` running in the background, its output in ``<workdir>/<name>.log``.

        On the way out a process still running gets SIGTERM (and SIGKILL if it
        has not ended 30 s later); the caller may end it earlier itself.
        """
        self.log.append(_shown(("debatecode", *args), env) + f" &  # output in {name}.log")
        with (self.workdir / f"{name}.log").open("wb") as output:
            proc = subprocess.Popen(
                [str(EXE), *args], cwd=cwd or self.workdir, env=user_env(env), stdout=output, stderr=subprocess.STDOUT
            )
            self.pids.append(proc.pid)
            try:
                yield proc
            finally:
                stop(proc)

    def output_of(self, name: str) -> str:
        """What the background process ``name`` has written so far."""
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""


def stop(proc: subprocess.Popen[bytes], signal_number: int = signal.SIGTERM, grace: float = 30) -> int:
    """Send ``signal_number`` to a running ``proc`` (SIGKILL after ``grace`` seconds) and return its exit status."""
    if proc.poll() is None:
        proc.send_signal(signal_number)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


def _shown(argv: tuple[str, ...], env: Mapping[str, str] | None) -> str:
    settings = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
    return "$ " + (f"{settings} " if settings else "") + shlex.join(argv)


HASHING_MEMORY = '[memory]\nembedder = "hashing"\n'
"""The memory section of a challenge whose subject is not memory: spares loading torch and MiniLM in every run."""


def write_config(journey: Journey, *sections: str, secret: str | None = None) -> Path:
    """``debatecode.toml`` in the scratch folder from these TOML sections (``HASHING_MEMORY`` unless one is given).

    The file goes into the log of commands too, with ``secret`` (a password) shown as ``***``.
    """
    chosen = [section.strip() for section in sections]
    if not any(section.startswith("[memory]") for section in chosen):
        chosen.append(HASHING_MEMORY.strip())
    text = "\n\n".join(chosen) + "\n"
    path = journey.workdir / "debatecode.toml"
    path.write_text(text)
    journey.log.append(f"# {path.name}:\n" + (text.replace(secret, "***") if secret else text))
    return path


def expect(condition: bool, what: str, evidence: str = "") -> None:
    """Fail the challenge with ``what`` (and the tail of ``evidence``) unless ``condition`` holds."""
    if not condition:
        tail = "\n".join(evidence.strip().splitlines()[-15:])
        raise ChallengeFailed(f"{what}\n{tail}" if tail else what)
