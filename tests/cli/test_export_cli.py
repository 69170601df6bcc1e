"""``debatecode export inspect``: the console script writes eval logs that inspect_ai reads and ``inspect view`` serves."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import SolvedAdd, run_cli

inspect_log = pytest.importorskip("inspect_ai.log")


def _store_env(solved_add: SolvedAdd) -> dict[str, str]:
    return {"DEBATECODE_STORE_URL": f"sqlite:///{solved_add.folder / '.debatecode' / 'debatecode.db'}"}


def test_a_session_exported_by_its_id_prefix_is_read_back_by_inspect(tmp_path: Path, solved_add: SolvedAdd) -> None:
    proc = run_cli("export", "inspect", solved_add.session_id[:6], cwd=tmp_path, env=_store_env(solved_add))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [path] = (tmp_path / "logs").glob("*.eval")
    assert f"eval log: logs/{path.name}" in proc.stdout and "inspect view --log-dir logs" in proc.stdout
    log = inspect_log.read_eval_log(str(path))
    [sample] = log.samples
    assert sample.id == solved_add.session_id and log.status == "success"
    assert sample.output.completion == (solved_add.folder / "out" / "solution.py").read_text()
    assert sample.scores["visible_tests"].value == 1.0


def test_out_json_writes_one_json_document_that_the_printed_command_lists(
    tmp_path: Path, solved_add: SolvedAdd
) -> None:
    proc = run_cli(
        "export", "inspect", solved_add.session_id, "--out", "add.json", cwd=tmp_path, env=_store_env(solved_add)
    )
    assert proc.returncode == 0, proc.stderr
    written = re.search(r"^eval log: (\S+)$", proc.stdout, re.M)
    hint = re.search(r"^open with: inspect view --log-dir (\S+)$", proc.stdout, re.M)
    assert written and hint, proc.stdout
    path = tmp_path / written[1]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\S*_add\.json", path.name), "inspect's timestamp in front"
    document = json.loads(path.read_text())
    assert document["eval"]["task_id"] == solved_add.session_id and len(document["samples"]) == 1
    listed = inspect_log.list_eval_logs(str(tmp_path / hint[1]))
    assert [Path(info.name.removeprefix("file://")) for info in listed] == [path.resolve()]


def test_bench_writes_a_log_per_strategy_into_the_folder_given(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    line = {"task_id": "HumanEval/0", "passed": True, "completion": "    return False\n", "tokens": 7, "calls": 1}
    lines = [{**line, "strategy": strategy, "settings": {"model": "scripted/x"}} for strategy in ("single", "debate")]
    (run / "results.jsonl").write_text("".join(json.dumps(one) + "\n" for one in lines))
    proc = run_cli("export", "inspect", "--bench", "run", "--out", "logs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    logs = [inspect_log.read_eval_log(str(path)) for path in sorted((tmp_path / "logs").glob("*.eval"))]
    assert sorted(log.eval.task for log in logs) == ["humaneval_debate", "humaneval_single"]
    assert proc.stdout.count("eval log: logs/") == 2 and "inspect view --log-dir logs" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a SESSION_ID or --bench DIR"),
        (("abc", "--bench", "."), "give a SESSION_ID or --bench DIR"),
        (("--bench", "nowhere"), "nowhere has no results.jsonl"),
        (("no-such-session",), "no session matches 'no-such-session'"),
        (("{id}", "--out", "log.txt"), "--out log.txt: an eval log file ends in .eval or .json (or give a folder)"),
    ],
)
def test_bad_input_exits_2_with_the_reason(
    tmp_path: Path, solved_add: SolvedAdd, args: tuple[str, ...], message: str
) -> None:
    argv = [arg.format(id=solved_add.session_id) for arg in args]
    proc = run_cli("export", "inspect", *argv, cwd=tmp_path, env=_store_env(solved_add))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in " ".join(proc.stderr.split())
    assert not (tmp_path / "logs").exists()


def test_without_inspect_ai_it_names_the_extra_and_exits_2(tmp_path: Path, solved_add: SolvedAdd) -> None:
    shadow = tmp_path / "shadow" / "inspect_ai"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named inspect_ai')\n")
    env = {**_store_env(solved_add), "PYTHONPATH": str(shadow.parent)}
    proc = run_cli("export", "inspect", solved_add.session_id, cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "install the [inspect] extra: pip install 'debatecode[inspect]'" in " ".join(proc.stderr.split())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get_json(url: str, deadline: float) -> Any:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.mark.slow
def test_inspect_view_lists_and_serves_the_exported_log(tmp_path: Path, solved_add: SolvedAdd) -> None:
    proc = run_cli("export", "inspect", solved_add.session_id, cwd=tmp_path, env=_store_env(solved_add))
    assert proc.returncode == 0, proc.stderr
    [path] = (tmp_path / "logs").glob("*.eval")
    port = _free_port()
    inspect_cli = Path(sys.executable).with_name("inspect")
    view = subprocess.Popen(
        [str(inspect_cli), "view", "start", "--log-dir", "logs", "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        listing = _get_json(f"http://127.0.0.1:{port}/api/logs", deadline)
        [listed] = listing["files"]
        assert listed["name"] == path.resolve().as_uri() and listed["task_id"] == solved_add.session_id
        served = _get_json(f"http://127.0.0.1:{port}/api/logs/{listed['name']}", deadline)
        assert served["status"] == "success" and served["samples"][0]["id"] == solved_add.session_id
    finally:
        view.terminate()
        view.wait(timeout=30)
