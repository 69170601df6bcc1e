"""What every challenge shares: the real console script, a scratch folder, and checks that say what failed."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXE = Path(sys.executable).with_name("debatecode")


class ChallengeFailed(AssertionError):
    """A check of a challenge did not hold; the message says which and shows the evidence."""


@dataclass
class Journey:
    """A scratch folder and a log of the commands a challenge ran, for the failure report."""

    workdir: Path
    log: list[str] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)

    def cli(self, *args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """Run ``debatecode ARGS`` as a user would, with a plain, wide terminal."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
        env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"})
        self.log.append("$ debatecode " + " ".join(args))
        with subprocess.Popen(
            [str(EXE), *args],
            cwd=cwd or self.workdir,
            env=env,
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
            return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def run(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run any other program (git, docker) in the scratch folder."""
        self.log.append("$ " + " ".join(argv))
        return subprocess.run(list(argv), cwd=cwd or self.workdir, capture_output=True, text=True, timeout=300)


def expect(condition: bool, what: str, evidence: str = "") -> None:
    """Fail the challenge with ``what`` (and the tail of ``evidence``) unless ``condition`` holds."""
    if not condition:
        tail = "\n".join(evidence.strip().splitlines()[-15:])
        raise ChallengeFailed(f"{what}\n{tail}" if tail else what)
