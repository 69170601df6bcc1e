"""The (code, tests) batch helper, on the Docker-free dummy backend: per-job and per-test results."""

from __future__ import annotations

import json
import sys

import pytest
from tests.support.dummy_sandbox import DummySandbox

from debatecode.sandbox.base import ExecResult, Limits
from debatecode.sandbox.checks import CheckJob, check_exec_job, check_result, run_checks
from debatecode.sandbox.verdict import LOADER, MARK

CODE = "def add(a, b):\n    return a + b\n"
TESTS = (
    "import time\n"
    "from solution import add\n"
    "def test_passes():\n    assert add(1, 2) == 3\n"
    "def test_fails():\n    assert add(1, 2) == 4\n"
    "def test_errors():\n    raise KeyError('boom')\n"
    "def test_sleeps():\n    time.sleep(30)\n"
    "def helper():\n    return 1\n"
)


async def test_every_outcome_with_durations() -> None:
    job = CheckJob(code=CODE, tests=TESTS, name="add", test_timeout_s=0.5)
    (result,) = await run_checks(DummySandbox(), [job], limits=Limits(timeout_s=20))
    outcomes = {test.name: test.outcome for test in result.tests}
    assert outcomes == {
        "test_passes": "passed",
        "test_fails": "failed",
        "test_errors": "error",
        "test_sleeps": "timeout",
    }
    assert result.name == "add" and result.status == "error" and not result.passed
    durations = {test.name: test.duration_s for test in result.tests}
    assert 0.4 < durations["test_sleeps"] < 5 and durations["test_passes"] < 0.4
    failed = next(test for test in result.tests if test.name == "test_fails")
    assert "assert 3 == 4" in failed.message or "AssertionError" in failed.message
    assert (result.count("passed"), result.count("failed"), result.count("error"), result.count("timeout")) == (
        1,
        1,
        1,
        1,
    )


async def test_humaneval_check_style_with_entry_point_and_names_seen_directly() -> None:
    tests = "def check(candidate):\n    assert candidate(2, 2) == 4\n    assert add(0, 0) == 0\n"
    jobs = [
        CheckJob(code=CODE, tests=tests, entry_point="add", name="good"),
        CheckJob(code="def add(a, b):\n    return a - b\n", tests=tests, entry_point="add", name="bad"),
    ]
    good, bad = await run_checks(DummySandbox(), jobs)
    assert good.passed and good.status == "ok" and [t.name for t in good.tests] == ["check"]
    assert not bad.passed and bad.tests[0].outcome == "failed"


async def test_code_that_does_not_load_is_one_error_with_the_traceback() -> None:
    (result,) = await run_checks(DummySandbox(), [CheckJob(code="def broken(:\n", tests=TESTS)])
    assert not result.passed and result.status == "error"
    assert [(t.name, t.outcome) for t in result.tests] == [("<load>", "error")]
    assert "SyntaxError" in result.tests[0].message


async def test_output_of_the_code_goes_to_stderr_and_truncation_is_flagged() -> None:
    code = "print('x' * 10000)\ndef f():\n    return 1\n"
    (result,) = await run_checks(
        DummySandbox(),
        [CheckJob(code=code, tests="def test_f():\n    assert f() == 1\n")],
        limits=Limits(output_bytes=1024),
    )
    assert result.passed and result.stderr_truncated and result.truncated and not result.stdout_truncated


def verdict_lines(nonce: str, *records: dict[str, object]) -> str:
    return "\n".join(f"{MARK} {nonce} {json.dumps(record)}" for record in records)


def test_a_test_running_when_the_job_timed_out_is_timeout_and_the_rest_too() -> None:
    job = CheckJob(code=CODE, tests=TESTS)
    stdout = verdict_lines(
        "n1",
        {"event": "collected", "tests": ["test_a", "test_b", "test_c"]},
        {"event": "result", "name": "test_a", "outcome": "passed", "duration_s": 0.01, "message": ""},
    )
    result = check_result(job, ExecResult(status="timeout", exit_code=None, stdout=stdout), "n1")
    assert [(t.name, t.outcome) for t in result.tests] == [
        ("test_a", "passed"),
        ("test_b", "timeout"),
        ("test_c", "timeout"),
    ]
    assert result.tests[1].message.startswith("while this test ran")
    assert result.tests[2].message.startswith("before this test ran")
    assert result.status == "timeout" and not result.passed


def test_oom_without_any_report_is_one_error_naming_memory() -> None:
    result = check_result(CheckJob(code=CODE, tests=TESTS), ExecResult(status="oom", exit_code=None), "n")
    assert [(t.name, t.outcome) for t in result.tests] == [("<load>", "error")]
    assert "memory" in result.tests[0].message


def test_lines_without_the_nonce_and_garbage_are_ignored() -> None:
    passed = {"event": "result", "name": "t", "outcome": "passed", "duration_s": 0.0, "message": ""}
    stdout = "\n".join(
        [
            "not a record",
            f"{MARK} n1 " + "[" * 50000,
            f"{MARK} n1 " + "x" * 100000,
            f"{MARK} n1 " + json.dumps({"event": "result", "name": "t", "outcome": "passed", "duration_s": "abc"}),
            verdict_lines("forged", {"event": "collected", "tests": ["t"]}, passed, {"event": "done"}),
            verdict_lines("n1", {"event": "collected", "tests": ["t"]}),
        ]
    )
    result = check_result(CheckJob(code=CODE, tests=TESTS), ExecResult(status="ok", exit_code=0, stdout=stdout), "n1")
    assert [(t.name, t.outcome) for t in result.tests] == [("t", "error")]
    assert not result.passed
    assert "without this job's nonce" in result.stderr and "not valid JSON" in result.stderr
    assert "dropped a verdict line of" in result.stderr and "malformed result record" in result.stderr


def test_every_test_passed_but_no_done_line_is_not_a_pass() -> None:
    passed = {"event": "result", "name": "t", "outcome": "passed", "duration_s": 0.0, "message": ""}
    stdout = verdict_lines("n1", {"event": "collected", "tests": ["t"]}, passed)
    result = check_result(CheckJob(code=CODE, tests=TESTS), ExecResult(status="ok", exit_code=0, stdout=stdout), "n1")
    assert not result.passed and result.status == "error"


@pytest.mark.parametrize("per_test", [None, 2.5])
def test_exec_job_layout(per_test: float | None) -> None:
    job = CheckJob(code=CODE, tests=TESTS, entry_point="add", test_timeout_s=per_test)
    exec_job, nonce = check_exec_job(job, Limits(timeout_s=9))
    assert set(exec_job.files) == {
        "solution.py",
        "test_solution.py",
        "_dc_check.py",
        ".dc_check.code",
        ".dc_plan.json",
        ".dc_nonce",
    }
    assert exec_job.argv == ["python3", "-I", "-S", "-B", "-c", LOADER, ".dc_plan.json"]
    assert exec_job.files[".dc_check.code"].startswith(sys.implementation.cache_tag + "\n")
    plan = json.loads(exec_job.files[".dc_plan.json"])
    assert plan["mode"] == "light" and plan["entry_point"] == "add" and plan["test_timeout_s"] == (per_test or 9)
    assert exec_job.files[".dc_nonce"] == nonce and len(nonce) == 32 and nonce not in exec_job.files[".dc_plan.json"]
    assert exec_job.collect == [] and exec_job.limits.timeout_s == 9
    _, other = check_exec_job(job, Limits(timeout_s=9))
    assert other != nonce


async def test_an_interpreter_of_another_version_compiles_the_checker_from_source() -> None:
    job = CheckJob(code=CODE, tests="def test_ok():\n    assert add(1, 2) == 3\n", name="x")
    exec_job, nonce = check_exec_job(job, Limits(timeout_s=20))
    files = {**exec_job.files, ".dc_check.code": "cpython-00\nnot base64 at all"}
    sandbox = DummySandbox()
    result = await sandbox.run(exec_job.model_copy(update={"files": files}))
    checked = check_result(job, result, nonce)
    assert checked.passed, checked
