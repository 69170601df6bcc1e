"""Sessions and HumanEval runs exported as inspect_ai eval logs, read back with the real inspect_ai package."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.dummy_sandbox import DummySandbox
from tests.support.scripted_solve import ADD_TASK, scripted_solve

import debatecode.sandbox
from debatecode import DebateResult
from debatecode.bench import run_humaneval
from debatecode.bench.humaneval import load_problems
from debatecode.bench.inspect_export import export_bench, export_session, log_file_name, session_eval_log
from debatecode.config import load_config
from debatecode.errors import ConfigError, UserError
from debatecode.llm.client import Message
from debatecode.llm.scripted import ScriptedModel, register_scripted, unregister_scripted
from debatecode.sandbox.settings import SandboxSettings
from debatecode.store import SessionStore, open_store

inspect_log = pytest.importorskip("inspect_ai.log")

PROBLEMS = load_problems(ids=["0", "13"])
WRONG = "HumanEval/13"
NOT_MODELS = ("tool", "human", "memory", "")


@pytest.fixture(scope="module")
def solved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SessionStore, DebateResult]]:
    """The scripted add.md debate, stored in a SQLite file of its own."""
    folder = tmp_path_factory.mktemp("session")
    url = f"sqlite:///{folder / 'store.db'}"
    result = scripted_solve(url, folder / "out")
    with open_store(url) as store:
        yield store, result


def _answer(messages: list[Message], tags: dict[str, str]) -> str:
    """The canonical solution of the problem asked, except on ``WRONG``."""
    text = "\n".join(m["content"] for m in messages)
    problem = next(p for p in PROBLEMS if f"def {p['entry_point']}(" in text)
    body = "    return None\n" if problem["task_id"] == WRONG else problem["canonical_solution"]
    return "```python\n" + problem["prompt"] + body + "```"


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real ``single`` run on two problems (one answered wrongly), scripted model, dummy sandbox."""
    folder = tmp_path_factory.mktemp("bench")
    monkeypatch = pytest.MonkeyPatch()

    def create_sandbox(settings: SandboxSettings, backend: str | None = None) -> DummySandbox:
        return DummySandbox()

    monkeypatch.setattr(debatecode.sandbox, "create_sandbox", create_sandbox)
    register_scripted("inspect-export", ScriptedModel(fn=_answer))
    try:
        config = load_config(
            overrides={
                "model": "scripted/inspect-export",
                "store_url": f"sqlite:///{folder / 'bench.db'}",
                "memory.embedder": "hashing",
                "quality.enabled": False,
            },
            use_file=False,
        )
        run_humaneval(PROBLEMS, config=config, strategies=["single"], out=folder / "run", jobs=1)
    finally:
        unregister_scripted("inspect-export")
        monkeypatch.undo()
    yield folder / "run"


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_session_log_has_the_task_the_final_code_the_tests_and_every_turn(
    tmp_path: Path, solved: tuple[SessionStore, DebateResult]
) -> None:
    store, result = solved
    session = store.get_session(result.session.id)
    turns = store.turns(session.id)
    model_turns = [t for t in turns if t.provider not in NOT_MODELS]
    path = export_session(store, session.id[:8], tmp_path / "session.eval")

    log = inspect_log.read_eval_log(str(path))

    assert log.status == "success" and log.eval.model == session.model and log.eval.task == "debatecode_solve"
    [sample] = log.samples
    assert sample.id == session.id and ADD_TASK.read_text() == sample.input
    assert sample.output.completion == result.code, "the output is the final code"
    score = sample.scores["visible_tests"]
    assert score.value == 1.0 and score.metadata == {"passed": 4, "total": 4, "winner": session.outcome["winner"]}
    assert log.results.scores[0].metrics["mean"].value == 1.0
    usage = sample.model_usage[session.model]
    assert (usage.input_tokens, usage.output_tokens) == (session.prompt_tokens, session.completion_tokens)
    assert log.stats.model_usage[session.model].total_tokens == session.prompt_tokens + session.completion_tokens
    assert [m.role for m in sample.messages] == ["user"] + ["assistant"] * len(model_turns)
    assert [m.text for m in sample.messages[1:]] == [t.content for t in model_turns]
    model_events = [e for e in sample.events if e.event == "model"]
    assert [e.output.completion for e in model_events] == [t.content for t in model_turns]
    assert [e.output.usage.input_tokens for e in model_events] == [t.prompt_tokens for t in model_turns]
    assert [m.role for m in model_events[0].input] == ["system", "user"], "the stored prompt split back"
    info = [e for e in sample.events if e.event == "info"]
    assert [e.data["content"] for e in info] == [t.content for t in turns if t.provider in NOT_MODELS]
    spans = [e for e in sample.events if e.event == "span_begin"]
    assert spans and {e.name for e in spans} >= {"round 0: proposal"}
    assert len(spans) == len([e for e in sample.events if e.event == "span_end"])
    assert sample.events[-1].event == "score" and sample.events[-1].score.value == 1.0


def test_a_json_log_holds_what_the_eval_log_holds_and_exports_repeat(
    tmp_path: Path, solved: tuple[SessionStore, DebateResult]
) -> None:
    store, result = solved
    as_eval = export_session(store, result.session.id, tmp_path / "a.eval")
    as_json = export_session(store, result.session.id, tmp_path / "a.json")
    again = export_session(store, result.session.id, tmp_path / "b.json")
    assert json.loads(as_json.read_text())["eval"]["task_id"] == result.session.id
    assert again.read_text() == as_json.read_text(), "the same session exports the same log"
    zipped, plain = (inspect_log.read_eval_log(str(p), resolve_attachments=True).samples[0] for p in (as_eval, as_json))
    fields = {"input", "output", "messages", "scores", "metadata", "model_usage", "role_usage"}
    assert zipped.model_dump(include=fields) == plain.model_dump(include=fields)
    # .eval pools identical prompt messages across model events (their ids then name the first copy): compare text
    assert [_event_view(e) for e in zipped.events] == [_event_view(e) for e in plain.events]


def _event_view(event: Any) -> tuple[Any, ...]:
    prompt = [(m.role, m.text) for m in event.input] if event.event == "model" else []
    return (event.event, event.uuid, event.span_id, event.timestamp, prompt)


def test_the_default_name_is_the_one_inspect_lists(
    tmp_path: Path, solved: tuple[SessionStore, DebateResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, result = solved
    monkeypatch.chdir(tmp_path)
    path = export_session(store, result.session.id)
    log = session_eval_log(store, result.session.id)
    assert path == Path("logs") / log_file_name(log)
    listed = inspect_log.list_eval_logs(str(tmp_path / "logs"))
    assert [(info.task, info.task_id) for info in listed] == [("debatecode-solve", result.session.id)]


@pytest.mark.parametrize(
    ("out", "name"),
    [
        ("add.json", r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}.*_add\.json"),
        ("add.eval", r"add\.eval"),
        ("folder", r"folder/.*_debatecode-solve_.*\.eval"),
        ("new-folder", r"new-folder/.*_debatecode-solve_.*\.eval"),
    ],
)
def test_every_out_gets_a_name_inspect_lists(
    tmp_path: Path, solved: tuple[SessionStore, DebateResult], out: str, name: str
) -> None:
    """inspect (and so ``inspect view``) lists every .eval file, but a .json one only behind its timestamp."""
    store, result = solved
    (tmp_path / "folder").mkdir()
    path = export_session(store, result.session.id, tmp_path / out)
    listed = inspect_log.list_eval_logs(str(path.parent))
    assert [Path(info.name.removeprefix("file://")) for info in listed] == [path]
    assert re.fullmatch(name, path.relative_to(tmp_path).as_posix())
    assert inspect_log.read_eval_log(listed[0].name, header_only=True).eval.task_id == result.session.id


def test_a_failed_session_exports_as_an_error(tmp_path: Path, solved: tuple[SessionStore, DebateResult]) -> None:
    store, result = solved
    copy = tmp_path / "store.db"
    shutil.copy(store.url.removeprefix("sqlite:///"), copy)
    with open_store(f"sqlite:///{copy}") as broken:
        broken.update_session(result.session.id, status="failed", error="the model went away")
        log = session_eval_log(broken, result.session.id)
    assert log.status == "error" and log.error is not None and log.error.message == "the model went away"
    assert log.samples[0].error.message == "the model went away"


def test_a_design_debate_exports_its_decision(tmp_path: Path, solved: tuple[SessionStore, DebateResult]) -> None:
    store, result = solved
    copy = tmp_path / "store.db"
    shutil.copy(store.url.removeprefix("sqlite:///"), copy)
    adr = tmp_path / "adr-0001-queue.md"
    adr.write_text("# ADR 1: use a queue\n\nAccepted.\n")
    outcome = {"method": "design", "adr": str(adr), "record_status": "accepted", "recommendation": "use a queue"}
    with open_store(f"sqlite:///{copy}") as designs:
        designs.update_session(result.session.id, kind="design", outcome={**outcome, "confidence": "HIGH"})
        log = session_eval_log(designs, result.session.id)
    [sample] = log.samples
    assert log.eval.task == "debatecode_debate" and sample.output.completion == adr.read_text()
    decision = sample.scores["decision"]
    assert (decision.value, decision.answer) == (
        "accepted",
        "use a queue",
    ) and "confidence HIGH" in decision.explanation
    assert log.results.scores[0].metrics == {}, "a decision is not averaged"


def test_a_bad_out_suffix_is_refused_before_anything_is_written(
    tmp_path: Path, solved: tuple[SessionStore, DebateResult]
) -> None:
    store, result = solved
    with pytest.raises(ConfigError, match=r"\.eval or \.json"):
        export_session(store, result.session.id, tmp_path / "log.txt")
    assert not list(tmp_path.iterdir())
    (tmp_path / "README").write_text("a file, not a folder\n")
    with pytest.raises(
        ConfigError, match=r"--out .*README: an eval log file ends in \.eval or \.json \(or give a folder\)"
    ):
        export_session(store, result.session.id, tmp_path / "README")
    assert [p.name for p in tmp_path.iterdir()] == ["README"]


def test_a_bench_run_gives_a_log_per_strategy_with_a_sample_per_problem(tmp_path: Path, bench_run: Path) -> None:
    records = _records(bench_run / "results.jsonl")
    [path] = export_bench(bench_run, tmp_path / "logs")

    log = inspect_log.read_eval_log(str(path))

    assert (
        log.status == "success"
        and log.eval.task == "humaneval_single"
        and log.eval.model == records[0]["settings"]["model"]
    )
    assert [s.id for s in log.samples] == ["HumanEval/0", "HumanEval/13"]
    assert [s.scores["hidden_tests"].value for s in log.samples] == ["C", "I"]
    assert log.results.scores[0].metrics["accuracy"].value == 0.5
    by_id = {r["task_id"]: r for r in records}
    for sample in log.samples:
        record = by_id[sample.id]
        assert sample.input == next(p["prompt"] for p in PROBLEMS if p["task_id"] == sample.id)
        assert sample.output.completion == sample.input + record["completion"], "the program: prompt + completion"
        assert {k: sample.metadata[k] for k in ("tokens", "calls", "seconds")} == {
            k: record[k] for k in ("tokens", "calls", "seconds")
        }
        usage = sample.model_usage[log.eval.model]
        assert (usage.input_tokens, usage.output_tokens) == (record["prompt_tokens"], record["completion_tokens"])
    assert log.stats.model_usage[log.eval.model].total_tokens == sum(r["tokens"] for r in records)
    assert log.results.metadata["mean_calls"] == sum(r["calls"] for r in records) / 2


def test_a_resumed_line_wins_and_a_strategy_missing_problems_is_unfinished(tmp_path: Path, bench_run: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(bench_run, folder)
    first, wrong = _records(folder / "results.jsonl")
    [before] = export_bench(folder)
    fixed = {**wrong, "passed": True, "result": "passed"}
    vote = {**first, "strategy": "vote", "samples": {"n": 1, "passed": 1}}
    with (folder / "results.jsonl").open("a") as results:
        results.write(json.dumps(fixed) + "\n" + json.dumps(vote) + "\n")
    os.utime(folder / "results.jsonl", (time.time() + 60, time.time() + 60))  # the run went on a minute later

    written = export_bench(folder)
    logs = {log.eval.task: log for log in map(inspect_log.read_eval_log, map(str, written))}

    assert set(logs) == {"humaneval_single", "humaneval_vote"}
    assert sorted((folder / "inspect").iterdir()) == sorted(written) and before not in written, "one log a strategy"
    assert logs["humaneval_single"].results.scores[0].metrics["accuracy"].value == 1.0, "the later line wins"
    assert logs["humaneval_vote"].status == "started", "vote answered one of two problems"
    assert logs["humaneval_vote"].samples[0].metadata["samples"] == {"n": 1, "passed": 1}
    assert (folder / "inspect").is_dir(), "the default folder is inside the results folder"


def test_a_folder_without_results_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no results\.jsonl"):
        export_bench(tmp_path)
    (tmp_path / "results.jsonl").write_text("\n")
    with pytest.raises(ConfigError, match="no results yet"):
        export_bench(tmp_path)


def test_without_inspect_ai_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, solved: tuple[SessionStore, DebateResult]
) -> None:
    store, result = solved
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(UserError, match=r"install the \[inspect\] extra") as caught:
        session_eval_log(store, result.session.id)
    assert caught.value.exit_code == 2
