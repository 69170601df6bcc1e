"""Local inference: debatecode's embedded-model path against bare llama-cpp-python, in the same run.

Usage: .venv/bin/python benchmarks/bench_local_inference.py [--rounds N] [--max-tokens N] [--sweep] [--busy] [--write]

What is measured, with ``local/qwen2.5-coder-0.5b`` and greedy decoding:

- **debate prompts**: eight chat prompts of one debate on ``examples/tasks/<task>.md``, rendered by
  ``render_prompt`` in debate order: the drafts of three authors (the same generator prompt), their
  three refines (each with its own candidate and test report), then two reviews of agent-1's candidate
  (judge, security). (a) is a bare ``Llama.create_chat_completion`` on a second model with the same
  settings, reset before every call (no prompt cache); (b) is ``generate_local``, whose model keeps the
  batch-aligned prefix it shares with the previous call. The two run interleaved, prompt by prompt, and
  (b)'s model is reset at the start of each round. Per prompt: prompt tokens, prompt tokens llama.cpp
  actually evaluated, prompt-eval time and generation speed (llama.cpp's own counters), wall time, and
  (b)/(a). The outputs of (a) and (b) must be identical; a row where they are not is flagged and the
  script exits with status 1.
- **n_batch** (``--sweep``): prompt tokens/s of four bare ``Llama`` objects in one process that differ
  only in n_batch (64/128/256/512), evaluating the same prompt in turn, and how many tokens of the
  debate prompts the batch-aligned cache would evaluate at each n_batch.
- **threads, n_ctx and memory** (``--sweep``): prompt and generation tokens/s and peak RSS with 1 or 2
  threads, at n_ctx 8192 and 4096, and with debatecode's previous settings (n_batch 512, 2 threads),
  each in its own process, ``--sweep-rounds`` times in rotated order (medians, with ratios to the
  previous settings measured in the same run).
- **threads under load** (``--busy``): 1 and 2 threads at the chosen n_batch, as the machine is and
  with one more process spinning on a core.

``--write`` records the tables in benchmarks/results/local-inference/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from debatecode.agents.prompts import render_prompt
from debatecode.agents.roles import get_role
from debatecode.execution.results import TestCaseResult, TestReport
from debatecode.llm import local
from debatecode.llm.local_amx import avoid_amx_weights
from debatecode.llm.types import Message
from debatecode.llm.weights import assemble
from debatecode.task import load_task

ROOT = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-0.5b"
OUT = ROOT / "benchmarks" / "results" / "local-inference"

# Three candidates for merge_intervals, as three authors might draft them, with their test reports.
CANDIDATES: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "def merge_intervals(intervals):\n"
        "    out = []\n"
        "    for start, end in sorted(intervals):\n"
        "        if out and start < out[-1][1]:\n"
        "            out[-1] = (out[-1][0], max(end, out[-1][1]))\n"
        "        else:\n"
        "            out.append((start, end))\n"
        "    return out\n",
        [
            ("example_2", "Expected [(1, 5)], got [(1, 4), (4, 5)]"),
            ("test_matches_brute_force", "AssertionError: assert [(0, 3), (3, 4)] == [(0, 4)]"),
        ],
    ),
    (
        "def merge_intervals(intervals):\n"
        "    intervals.sort()\n"
        "    merged = []\n"
        "    for start, end in intervals:\n"
        "        if merged and start <= merged[-1][1]:\n"
        "            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))\n"
        "        else:\n"
        "            merged.append((start, end))\n"
        "    return merged\n",
        [("test_input_not_modified", "AssertionError: assert [(1, 2), (5, 6)] == [(5, 6), (1, 2)]")],
    ),
    (
        "def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:\n"
        "    result: list[tuple[int, int]] = []\n"
        "    for start, end in sorted(intervals):\n"
        "        if result and start <= result[-1][1]:\n"
        "            result[-1] = (result[-1][0], max(end, result[-1][1]))\n"
        "        else:\n"
        "            result.append((start, end))\n"
        "    return result\n",
        [],
    ),
]
PASSING = ["example_1", "example_2", "example_3", "test_unsorted_input", "test_nested_interval"]


def _report(failures: list[tuple[str, str]]) -> TestReport:
    failed = {name for name, _ in failures}
    cases = [TestCaseResult(name=name, outcome="passed") for name in PASSING if name not in failed]
    cases += [TestCaseResult(name=name, outcome="failed", message=message) for name, message in failures]
    return TestReport(cases=cases, status="ok")


def debate_prompts(task_name: str) -> list[tuple[str, list[Message]]]:
    """The benchmark's prompts in debate order: three drafts, three refines, two reviews."""
    task = load_task(ROOT / "examples" / "tasks" / f"{task_name}.md")
    generator = get_role("generator")
    prompts: list[tuple[str, list[Message]]] = []
    for agent in (1, 2, 3):
        prompts.append(
            (
                f"draft agent-{agent}",
                render_prompt("draft", style="chat", role=generator, task=task, n_agents=3).messages,
            )
        )
    for agent, (code, failures) in enumerate(CANDIDATES, start=1):
        prompt = render_prompt(
            "refine", style="chat", role=generator, task=task, n_agents=3, code=code, report=_report(failures)
        )
        prompts.append((f"refine agent-{agent}", prompt.messages))
    code, failures = CANDIDATES[0]
    for reviewer in ("judge", "security"):
        prompt = render_prompt(
            "review",
            style="chat",
            role=get_role(reviewer),
            task=task,
            n_agents=3,
            author="agent-1",
            code=code,
            report=_report(failures),
        )
        prompts.append((f"review by {reviewer}", prompt.messages))
    return prompts


# --- measuring one call -------------------------------------------------------------------------


def _counters(llama: Any) -> tuple[float, int, float, int]:
    import llama_cpp

    perf = llama_cpp.llama_perf_context(llama.ctx)
    return perf.t_p_eval_ms, perf.n_p_eval, perf.t_eval_ms, perf.n_eval


@dataclass
class Call:
    prompt_tokens: int
    evaluated: int
    """Prompt tokens llama.cpp evaluated (the rest came from the prompt cache)."""
    prompt_eval_s: float
    generated: int
    generation_s: float
    wall_s: float
    text: str


def measure(llama: Any, run: Any) -> Call:
    """Run ``run() -> (text, prompt_tokens)`` and read ``llama``'s counters around it."""
    before = _counters(llama)
    start = time.perf_counter()
    text, prompt_tokens = run()
    wall = time.perf_counter() - start
    after = _counters(llama)
    t_p, n_p, t_e, n_e = (b - a for a, b in zip(before, after, strict=True))
    return Call(int(prompt_tokens), int(n_p), t_p / 1000, int(n_e), t_e / 1000, wall, text)


def bare_call(llama: Any, messages: list[Message], max_tokens: int) -> Call:
    def run() -> tuple[str, int]:
        llama.reset()
        out = llama.create_chat_completion(messages=messages, max_tokens=max_tokens, temperature=0.0)
        return str(out["choices"][0]["message"]["content"] or ""), out["usage"]["prompt_tokens"]

    return measure(llama, run)


def debatecode_call(llama: Any, messages: list[Message], max_tokens: int) -> Call:
    def run() -> tuple[str, int]:
        generation = local.generate_local(MODEL, messages, max_tokens=max_tokens, temperature=0.0)
        return generation.text, generation.prompt_tokens

    return measure(llama, run)


# --- debate prompts: (a) bare against (b) debatecode ---------------------------------------------


@dataclass
class PromptResult:
    name: str
    bare: list[Call] = field(default_factory=list)
    ours: list[Call] = field(default_factory=list)


def compare(task_name: str, rounds: int, max_tokens: int, console: Console) -> list[PromptResult]:
    from llama_cpp import Llama

    avoid_amx_weights()

    spec = local.LOCAL_MODELS[MODEL]
    assert spec.chunks is not None
    bare = Llama(model_path=str(assemble(spec.chunks)), verbose=False, seed=0, **local._llama_settings(spec))
    ours = local._load(MODEL).llama
    prompts = debate_prompts(task_name)
    results = [PromptResult(name) for name, _ in prompts]
    for round_no in range(rounds):
        ours.reset()
        for index, ((name, messages), result) in enumerate(zip(prompts, results, strict=True)):
            if (index + round_no) % 2 == 0:
                result.bare.append(bare_call(bare, messages, max_tokens))
                result.ours.append(debatecode_call(ours, messages, max_tokens))
            else:
                result.ours.append(debatecode_call(ours, messages, max_tokens))
                result.bare.append(bare_call(bare, messages, max_tokens))
            a, b = result.bare[-1], result.ours[-1]
            console.log(
                f"round {round_no + 1} {name}: evaluated {a.evaluated}/{b.evaluated} of {a.prompt_tokens}, "
                f"wall {a.wall_s:.2f}/{b.wall_s:.2f} s"
            )
    bare.close()
    return results


def _median(calls: list[Call], attr: str) -> float:
    return statistics.median(getattr(call, attr) for call in calls)


def _gen_rate(calls: list[Call]) -> float:
    return sum(c.generated for c in calls) / max(sum(c.generation_s for c in calls), 1e-9)


COMPARE_HEADER = [
    "prompt",
    "prompt tokens",
    "evaluated (a)",
    "evaluated (b)",
    "prompt eval s (a)",
    "prompt eval s (b)",
    "(b)/(a)",
    "gen tok/s (a)",
    "gen tok/s (b)",
    "wall s (a)",
    "wall s (b)",
    "(b)/(a) wall",
    "same output",
]


def compare_rows(results: list[PromptResult]) -> list[list[str]]:
    rows = []
    for r in results:
        same = all(a.text == b.text for a, b in zip(r.bare, r.ours, strict=True))
        pa, pb = _median(r.bare, "prompt_eval_s"), _median(r.ours, "prompt_eval_s")
        wa, wb = _median(r.bare, "wall_s"), _median(r.ours, "wall_s")
        rows.append(
            [
                r.name,
                str(r.bare[0].prompt_tokens),
                str(r.bare[-1].evaluated),
                str(r.ours[-1].evaluated),
                f"{pa:.2f}",
                f"{pb:.2f}",
                f"{pb / pa:.2f}",
                f"{_gen_rate(r.bare):.1f}",
                f"{_gen_rate(r.ours):.1f}",
                f"{wa:.2f}",
                f"{wb:.2f}",
                f"{wb / wa:.2f}",
                "yes" if same else "**NO**",
            ]
        )
    a_calls = [c for r in results for c in r.bare]
    b_calls = [c for r in results for c in r.ours]
    n = len(results[0].bare)
    pa, pb = sum(c.prompt_eval_s for c in a_calls) / n, sum(c.prompt_eval_s for c in b_calls) / n
    wa, wb = sum(c.wall_s for c in a_calls) / n, sum(c.wall_s for c in b_calls) / n
    rows.append(
        [
            "**total** (mean of rounds)",
            str(sum(r.bare[0].prompt_tokens for r in results)),
            str(sum(c.evaluated for c in a_calls) // n),
            str(sum(c.evaluated for c in b_calls) // n),
            f"{pa:.2f}",
            f"{pb:.2f}",
            f"{pb / pa:.2f}",
            f"{_gen_rate(a_calls):.1f}",
            f"{_gen_rate(b_calls):.1f}",
            f"{wa:.2f}",
            f"{wb:.2f}",
            f"{wb / wa:.2f}",
            "yes" if all(row[-1] == "yes" for row in rows) else "**NO**",
        ]
    )
    return rows


# --- settings sweep -----------------------------------------------------------------------------


def _rss_mb() -> tuple[float, float]:
    status = Path("/proc/self/status").read_text()
    values = {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines() if line.startswith("Vm")}
    return values.get("VmRSS", 0) / 1024, values.get("VmHWM", 0) / 1024


def sweep_child(config: dict[str, int], task_name: str, reps: int, max_tokens: int) -> dict[str, float]:
    """One setting in this process: median prompt and generation tokens/s, and RSS."""
    from llama_cpp import Llama

    avoid_amx_weights()

    spec = local.LOCAL_MODELS[MODEL]
    assert spec.chunks is not None
    llama = Llama(
        model_path=str(assemble(spec.chunks)),
        verbose=False,
        seed=0,
        n_ctx=config["n_ctx"],
        n_batch=config["n_batch"],
        n_ubatch=config["n_batch"],
        n_threads=config["n_threads"],
        n_threads_batch=config["n_threads"],
    )
    messages = dict(debate_prompts(task_name))["refine agent-1"]
    bare_call(llama, [{"role": "user", "content": "Say hi."}], 4)  # warm-up
    calls = [bare_call(llama, messages, max_tokens) for _ in range(reps)]
    rss, peak = _rss_mb()
    return {
        "prompt_tokens": calls[0].evaluated,
        "pp_tps": statistics.median(c.evaluated / c.prompt_eval_s for c in calls),
        "gen_tps": statistics.median(c.generated / c.generation_s for c in calls),
        "rss_mb": rss,
        "peak_rss_mb": peak,
    }


def _run_child(config: dict[str, int], task_name: str, reps: int, max_tokens: int) -> dict[str, float]:
    argv = [sys.executable, __file__, "--task", task_name, "--child", json.dumps(config)]
    argv += ["--reps", str(reps), "--max-tokens", str(max_tokens)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


BATCHES = (64, 128, 256, 512)
BATCH_HEADER = [
    "n_batch",
    "prompt tok/s",
    "× 512",
    "debate prompt tokens evaluated",
    "est. prompt-eval s per debate",
    "× 512",
]


def batch_sweep(task_name: str, reps: int, console: Console) -> list[list[str]]:
    """Prompt speed of each n_batch (one process, interleaved) and what each would evaluate of the debate.

    A smaller n_batch keeps more of a shared prefix (it is cut to whole batches) but may evaluate
    prompts more slowly; the estimate multiplies the two over the eight debate prompts.
    """
    from llama_cpp import Llama

    avoid_amx_weights()

    spec = local.LOCAL_MODELS[MODEL]
    assert spec.chunks is not None
    settings = local._llama_settings(spec)
    path = str(assemble(spec.chunks))
    models = {
        n_batch: Llama(model_path=path, verbose=False, seed=0, **{**settings, "n_batch": n_batch, "n_ubatch": n_batch})
        for n_batch in BATCHES
    }
    prompts = debate_prompts(task_name)
    # The prompt tokens of each debate prompt, as llama.cpp fed them (one token generated).
    tokens = []
    for _, messages in prompts:
        call = bare_call(models[64], messages, 1)
        tokens.append(models[64].input_ids[: call.prompt_tokens].tolist())
    refine = dict(prompts)["refine agent-1"]
    rates: dict[int, list[float]] = {n_batch: [] for n_batch in BATCHES}
    for rep in range(reps):
        for n_batch in BATCHES if rep % 2 == 0 else BATCHES[::-1]:
            call = bare_call(models[n_batch], refine, 1)
            rates[n_batch].append(call.evaluated / call.prompt_eval_s)
        console.log(f"n_batch sweep rep {rep + 1}: { {b: round(r[-1]) for b, r in rates.items()} }")
    for model in models.values():
        model.close()

    def evaluated(n_batch: int) -> int:
        previous: list[int] = []
        total = 0
        for prompt in tokens:
            total += len(prompt) - local._reusable_prefix(previous, prompt, n_batch)
            previous = prompt[: len(prompt) - len(prompt) % n_batch]
        return total

    rate = {n_batch: statistics.median(r) for n_batch, r in rates.items()}
    estimate = {n_batch: evaluated(n_batch) / rate[n_batch] for n_batch in BATCHES}
    rows = []
    for n_batch in BATCHES:
        label = " (chosen)" if n_batch == spec.n_batch else " (previous)" if n_batch == 512 else ""
        rows.append(
            [
                f"{n_batch}{label}",
                f"{rate[n_batch]:.0f}",
                f"{rate[n_batch] / rate[512]:.2f}",
                f"{evaluated(n_batch)} of {sum(map(len, tokens))}",
                f"{estimate[n_batch]:.1f}",
                f"{estimate[n_batch] / estimate[512]:.2f}",
            ]
        )
    return rows


THREAD_HEADER = ["n_batch", "threads", "n_ctx", "prompt tok/s", "× previous", "gen tok/s", "× previous", "peak RSS MB"]
PREVIOUS = {"n_ctx": 8192, "n_batch": 512, "n_threads": 2}
"""debatecode's settings before this benchmark: llama-cpp-python's n_batch, one thread per core (2 here)."""


def thread_sweep(task_name: str, rounds: int, reps: int, console: Console) -> list[list[str]]:
    """Threads and n_ctx at the chosen n_batch, and the previous settings, each in its own process."""
    spec = local.LOCAL_MODELS[MODEL]
    chosen = local._llama_settings(spec)
    configs = [{"n_ctx": 8192, "n_batch": spec.n_batch, "n_threads": t} for t in (1, 2)]
    configs.append({"n_ctx": 4096, "n_batch": spec.n_batch, "n_threads": chosen["n_threads"]})
    configs.append(PREVIOUS)
    measured: dict[str, list[dict[str, float]]] = {json.dumps(c): [] for c in configs}
    for round_no in range(rounds):
        shift = round_no % len(configs)
        for config in configs[shift:] + configs[:shift]:
            result = _run_child(config, task_name, reps, 48)
            measured[json.dumps(config)].append(result)
            console.log(f"thread sweep round {round_no + 1} {config}: {result}")

    def med(config: dict[str, int], key: str) -> float:
        return statistics.median(r[key] for r in measured[json.dumps(config)])

    rows = []
    for config in configs:
        is_chosen = all(config[k] == chosen[k] for k in config)
        label = " (chosen)" if is_chosen else " (previous)" if config == PREVIOUS else ""
        rows.append(
            [
                f"{config['n_batch']}{label}",
                str(config["n_threads"]),
                str(config["n_ctx"]),
                f"{med(config, 'pp_tps'):.0f}",
                f"{med(config, 'pp_tps') / med(PREVIOUS, 'pp_tps'):.2f}",
                f"{med(config, 'gen_tps'):.1f}",
                f"{med(config, 'gen_tps') / med(PREVIOUS, 'gen_tps'):.2f}",
                f"{med(config, 'peak_rss_mb'):.0f}",
            ]
        )
    return rows


BUSY_HEADER = ["other load", "threads", "prompt tok/s", "gen tok/s", "gen × 1 thread, same load"]


def busy_sweep(task_name: str, console: Console) -> list[list[str]]:
    """1 and 2 threads at the chosen n_batch, as the machine is and with one more process spinning on a core.

    The spinning process stands in for what shares the cores during a debate: the sandbox running
    another agent's tests, or another engineer's job.
    """
    spec = local.LOCAL_MODELS[MODEL]
    rows = []
    for label, spin in (("as measured", False), ("+1 spinning process", True)):
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if spin else None
        try:
            results = {
                threads: _run_child(
                    {"n_ctx": spec.n_ctx, "n_batch": spec.n_batch, "n_threads": threads}, task_name, 1, 16
                )
                for threads in (1, 2)
            }
        finally:
            if burner is not None:
                burner.kill()
                burner.wait()
        console.log(f"{label}: {results}")
        for threads, result in results.items():
            rows.append(
                [
                    label,
                    str(threads),
                    f"{result['pp_tps']:.1f}",
                    f"{result['gen_tps']:.2f}",
                    f"{result['gen_tps'] / results[1]['gen_tps']:.2f}",
                ]
            )
    return rows


# --- output -------------------------------------------------------------------------------------


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def show(console: Console, title: str, header: list[str], rows: list[list[str]]) -> None:
    table = Table(title=title)
    for column in header:
        table.add_column(column)
    for row in rows:
        table.add_row(*(cell.replace("**", "") for cell in row))
    console.print(table)


def machine() -> str:
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")), "")
    import llama_cpp

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"nproc {os.cpu_count()}, CPU {model or platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, llama-cpp-python {llama_cpp.__version__}; load average at start {load}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="merge_intervals", help="examples/tasks/<task>.md")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the eight debate prompts")
    parser.add_argument("--max-tokens", type=int, default=192)
    parser.add_argument("--sweep", action="store_true", help="also sweep n_batch and threads")
    parser.add_argument("--sweep-rounds", type=int, default=2)
    parser.add_argument("--reps", type=int, default=2, help="calls per setting and sweep round")
    parser.add_argument("--busy", action="store_true", help="also measure 1 and 2 threads with one core busy")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.child:
        print(json.dumps(sweep_child(json.loads(args.child), args.task, args.reps, args.max_tokens)))
        return

    console = Console()
    spec = local.LOCAL_MODELS[MODEL]
    settings = local._llama_settings(spec)
    about = machine()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=False
    ).stdout.strip()
    sections = []
    if args.sweep:
        batch_rows = batch_sweep(args.task, args.reps * 2, console)
        show(console, "n_batch (one process, interleaved)", BATCH_HEADER, batch_rows)
        thread_rows = thread_sweep(args.task, args.sweep_rounds, args.reps, console)
        show(console, "Threads and n_ctx (one process each)", THREAD_HEADER, thread_rows)
        sections.append(
            "## n_batch\n\n"
            f"Four bare `Llama`s with {settings['n_threads']} thread(s) in one process, differing only in n_batch, "
            f"evaluate the `refine agent-1` prompt fresh in turn ({args.reps * 2} times each, alternating order; "
            'median tokens/s). "Debate prompt tokens evaluated" is what the batch-aligned prompt cache would '
            "evaluate of the eight debate prompts at that n_batch (the shared prefix is cut to whole batches); the "
            "estimate divides it by the speed.\n\n"
            + markdown(BATCH_HEADER, batch_rows)
            + "\n\n## Threads, n_ctx and memory\n\n"
            "A bare `Llama` per setting, in its own process: the `refine agent-1` prompt evaluated fresh and "
            f"48 greedy tokens, {args.reps} calls per round, median of {args.sweep_rounds} rounds in rotated order. "
            "`× previous` is the ratio to debatecode's previous settings (n_batch 512, 2 threads), measured in "
            "the same run.\n\n" + markdown(THREAD_HEADER, thread_rows)
        )
    if args.busy:
        busy_rows = busy_sweep(args.task, console)
        show(console, "Threads with one core busy", BUSY_HEADER, busy_rows)
        sections.append(
            "## Threads when a core is busy\n\n"
            f"A bare `Llama` (n_batch {spec.n_batch}, n_ctx {spec.n_ctx}): the `refine agent-1` prompt and 16 "
            "greedy tokens, once as the machine was, once with one more process spinning on a core (as the "
            "sandbox running another agent's tests does during a debate).\n\n" + markdown(BUSY_HEADER, busy_rows)
        )
    results = compare(args.task, args.rounds, args.max_tokens, console)
    rows = compare_rows(results)
    show(console, f"(a) bare llama-cpp-python vs (b) generate_local, {MODEL}", COMPARE_HEADER, rows)
    sections.insert(
        0,
        f"## Debate prompts: (a) bare llama-cpp-python, (b) `generate_local`\n\n"
        f"Eight prompts of one debate on `examples/tasks/{args.task}.md` in debate order, greedy, at most "
        f"{args.max_tokens} new tokens, {args.rounds} rounds (times are medians per prompt; the total is the mean "
        f'per round). Settings of both: {settings}. "evaluated" is the prompt tokens llama.cpp evaluated '
        "(its `n_p_eval` counter); the rest came from the prompt cache.\n\n" + markdown(COMPARE_HEADER, rows),
    )
    if args.write:
        OUT.mkdir(parents=True, exist_ok=True)
        command = " ".join(["benchmarks/bench_local_inference.py", *sys.argv[1:]])
        (OUT / "README.md").write_text(
            f"# Local inference: prompt cache and threads ({MODEL})\n\n"
            f"Command: `.venv/bin/python {command}` at commit {commit} (with the working tree of this change).\n\n"
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on: {about}.\n"
            "Other jobs shared the machine; compare the ratios, which are measured in the same run.\n\n"
            + "\n\n".join(sections)
            + "\n"
        )
        console.print(f"recorded in {(OUT / 'README.md').relative_to(ROOT)}")
    if rows[-1][-1] != "yes":
        console.print("[red]outputs of (a) and (b) differ[/red]")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
