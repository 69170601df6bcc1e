"""A reader that stops reading (``debatecode ... | head``) ends the command quietly (issue 31, item 14).

Python's docs: on EPIPE, send stdout to /dev/null and exit 1, with no traceback and no message.
``sandbox doctor --json`` used to report "unexpected BrokenPipeError ... (a bug in debatecode)", exit 3.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.cli.helpers import EXE


@pytest.mark.parametrize(
    "args",
    [("sandbox", "doctor", "--json"), ("sessions", "list", "--json"), ("bench", "humaneval", "--help"), ("--help",)],
    ids=["doctor-json", "sessions-json", "subcommand-help", "root-help"],
)
def test_a_closed_stdout_exits_1_without_a_word(tmp_path: Path, args: tuple[str, ...]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBATECODE_")}
    env.update({"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"})
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: the first write gets EPIPE, as after `| head` has quit
    try:
        proc = subprocess.run(
            [str(EXE), *args], cwd=tmp_path, env=env, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == "", proc.stderr
