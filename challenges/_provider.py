"""A local OpenAI-compatible provider for the challenges: the test suite's fake, run as a process of its own.

``python -m tests.support.fake_provider`` serves ``/v1/chat/completions`` on
127.0.0.1 and takes its orders on stdin (see ``main`` there): what to answer
next (a queue of behaviours such as ``429/1``, ``503`` or ``answer``), what to
answer once the queue is empty, and the log of every request it received.
``debatecode`` reaches it the way it reaches any OpenAI-compatible server:
``--model openai/<name>`` with ``llm.api_base`` set in ``debatecode.toml``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from types import TracebackType
from typing import Any

from challenges._harness import REPO, ChallengeFailed, Journey

MODEL = "openai/fake-coder"
"""The model string every challenge run uses against the fake provider."""

API_KEY_ENV = {"OPENAI_API_KEY": "sk-fake-for-challenges", "DEBATECODE_ALLOW_MODEL_REQUESTS": "1"}
"""What ``debatecode`` needs in its environment to call the fake provider (litellm insists on a key)."""

ADD_REPLY = """\
Adding is exact for Python ints, so plain addition is right.
```python
def add(a: int, b: int) -> int:
    return a + b
```
Satisfaction: 95
Rationale: correct because Python ints are exact and every test passes.
Blocking concerns: none
Suggested changes: none
Objection: none, because the task fixes the input type to int and the tests cover negatives.
Ranking: 1 > 2 > 3
Vote: Candidate 1
"""
"""One reply that serves every prompt of a debate on examples/tasks/add.md: code, review, objection and vote."""


class FakeProvider:
    """The fake provider process: ``api_base`` to point ``debatecode`` at, and its control channel.

    Every answer is ``reply``, written ``delay`` seconds after its request
    arrives; ``default`` is what it does once the queued behaviours are used up.
    """

    def __init__(self, journey: Journey, reply: str, *, delay: float = 0.0, default: str = "answer") -> None:
        reply_file = journey.workdir / "provider-reply.txt"
        reply_file.write_text(reply)
        argv = [sys.executable, "-m", "tests.support.fake_provider", "--reply-file", str(reply_file)]
        argv += ["--delay", str(delay), "--default", default]
        journey.log.append("$ " + shlex.join(argv) + "  # the fake provider, driven over its stdin")
        self._errors = journey.workdir / "provider.log"
        with self._errors.open("wb") as errors:
            self._proc = subprocess.Popen(
                argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True
            )
        self.api_base = self._read_line()

    def enqueue(self, *behaviours: str) -> None:
        """Play these behaviours (``answer``, ``503``, ``429/1`` ...), in order, for the next requests."""
        self._order("enqueue " + " ".join(behaviours))

    def set_default(self, behaviour: str) -> None:
        """What to do once the queue is empty: ``answer`` when up, ``503`` when down."""
        self._order(f"default {behaviour}")

    def requests(self) -> list[dict[str, Any]]:
        """Every request received so far: ``{"at", "kind", "status"}``, oldest first."""
        seen: list[dict[str, Any]] = json.loads(self._ask("requests"))
        return seen

    def answered(self) -> int:
        """How many requests got an answer (every other one got a fault)."""
        return sum(request["kind"] == "answer" for request in self.requests())

    def close(self) -> None:
        """Stop the provider process."""
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            try:
                self._proc.stdin.write("quit\n")
                self._proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def config(self, **llm: float) -> str:
        """A ``debatecode.toml`` ``[llm]`` section that points at this provider, with ``llm`` settings added."""
        lines = ["[llm]", f'api_base = "{self.api_base}"', *(f"{key} = {value}" for key, value in llm.items())]
        return "\n".join(lines) + "\n"

    def _order(self, command: str) -> None:
        answer = self._ask(command)
        if answer != "ok":
            raise ChallengeFailed(f"the fake provider refused {command!r}: {answer}")

    def _ask(self, command: str) -> str:
        assert self._proc.stdin is not None
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        return self._read_line()

    def _read_line(self) -> str:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait(10)
            error = self._errors.read_text(errors="replace")
            raise ChallengeFailed(f"the fake provider exited {self._proc.returncode}\n{error[-2000:]}")
        return line.strip()

    def __enter__(self) -> FakeProvider:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
