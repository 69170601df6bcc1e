"""Time limits are finite and at most one day, checked where they come in (issue 31, item 6).

``time_limit: 10000000000s`` in a task, ``sandbox.timeout_s = 1e300`` in the config
and ``sandbox exec --timeout 1e12`` were accepted; the checker then crashed with
``OverflowError`` and correct code scored 0. Each is now bad input (exit 2) with a
message that names the limit.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from debatecode.cli.app import app
from debatecode.errors import ConfigError, ExitCode, TaskError
from debatecode.sandbox.base import Limits
from debatecode.sandbox.settings import MAX_TIMEOUT_S
from debatecode.task import Task, parse_task

REPO = Path(__file__).resolve().parents[1]
ADD_TASK = REPO / "examples" / "tasks" / "add.md"
REPLIES = REPO / "examples" / "replies" / "add.yaml"


def _task_text(time_limit: str) -> str:
    text = ADD_TASK.read_text(encoding="utf-8")
    assert "\ntime_limit: 2s\n" in text
    return text.replace("\ntime_limit: 2s\n", f"\ntime_limit: {time_limit}\n", 1)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())


# -- a task's time_limit ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["10000000000s", "86401s", "86400001ms", "1" + "0" * 400])
def test_a_task_time_limit_over_one_day_is_a_task_error(value: str) -> None:
    with pytest.raises(TaskError, match=r"longer than the longest limit a sandbox takes \(86400 s, one day\)"):
        parse_task(_task_text(value), "t.md")


@pytest.mark.parametrize(("value", "seconds"), [("86400s", 86_400.0), ("2s", 2.0), ("500ms", 0.5)])
def test_a_task_time_limit_up_to_one_day_is_kept(value: str, seconds: float) -> None:
    assert parse_task(_task_text(value), "t.md").time_limit_s == seconds


@pytest.mark.parametrize("seconds", [1e300, math.inf, math.nan, 0.0, MAX_TIMEOUT_S + 1])
def test_a_task_built_in_code_takes_no_unbounded_time_limit(seconds: float) -> None:
    with pytest.raises(ValidationError, match="time_limit_s"):
        Task(title="t", entry_point="f", description="d", time_limit_s=seconds)


def test_solve_with_a_huge_task_time_limit_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    task = tmp_path / "task.md"
    task.write_text(_task_text("10000000000s"), encoding="utf-8")
    code, output = _cli("solve", str(task), "--model", f"scripted:{REPLIES}", "--sandbox", "local")
    assert code == ExitCode.BAD_INPUT and "time_limit '10000000000s' is longer than" in output


# -- the config's sandbox.timeout_s -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1e300", "inf", "nan", "86401"])
def test_a_config_sandbox_timeout_over_one_day_is_a_config_error(tmp_path: Path, value: str) -> None:
    from debatecode.config import load_config

    config = tmp_path / "debatecode.toml"
    config.write_text(f"[sandbox]\ntimeout_s = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"sandbox\.timeout_s") as caught:
        load_config(config)
    assert caught.value.exit_code == ExitCode.BAD_INPUT


def test_an_env_sandbox_timeout_of_1e300_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from debatecode.config import load_config

    monkeypatch.setenv("DEBATECODE_SANDBOX__TIMEOUT_S", "1e300")
    with pytest.raises(ConfigError, match="less than or equal to 86400"):
        load_config(use_file=False)


def test_solve_with_a_config_timeout_of_1e300_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "debatecode.toml").write_text("[sandbox]\ntimeout_s = 1e300\n", encoding="utf-8")
    code, output = _cli("solve", str(ADD_TASK), "--model", f"scripted:{REPLIES}", "--sandbox", "local")
    assert code == ExitCode.BAD_INPUT and "sandbox.timeout_s" in output and "86400" in output


# -- sandbox exec --timeout and the Limits every job carries -------------------------------------------


def test_sandbox_exec_timeout_1e12_exits_2_before_running(tmp_path: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text("print('ran')\n", encoding="utf-8")
    code, output = _cli("sandbox", "exec", str(program), "--timeout", "1e12")
    assert code == ExitCode.BAD_INPUT and "--timeout" in output and "86400" in output and "ran" not in output


def test_sandbox_exec_caps_timeout_at_the_sandbox_maximum() -> None:
    from debatecode.cli.sandbox import EXEC_MAX_TIMEOUT_S

    assert EXEC_MAX_TIMEOUT_S == MAX_TIMEOUT_S


@pytest.mark.parametrize("seconds", [1e12, math.inf, math.nan])
def test_limits_refuse_an_unbounded_job_timeout(seconds: float) -> None:
    with pytest.raises(ValidationError, match="timeout_s"):
        Limits(timeout_s=seconds)
