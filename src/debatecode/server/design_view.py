"""What a design debate's page shows, read from its stored turns and events.

Speeches grouped by round with the perspectives side by side, who challenges
whom, each perspective's satisfaction over the rounds (drawn as an SVG chart),
the convergence polls' individual answers, the escalation and the human's
choice, and the decision record split into its ``##`` sections. The speeches
are read with the debate's own readers (``protocol/design/replies.py``), so the
page sees a reply as the debate saw it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from debatecode.protocol.design.replies import parse_poll_answer, parse_speech
from debatecode.server.rendering import render_markdown
from debatecode.server.schemas import EscalationView
from debatecode.server.session_view import LiveView
from debatecode.store.records import TurnRecord

__all__ = ["Chart", "DesignRound", "DesignView", "RecordSection", "Speech", "build_design_view", "record_sections"]

SPEECH_PHASES = {"positions": "position", "arguments": "argument", "rebuttals": "rebuttal"}
SERIES_CLASSES = 8
"""Series colours the stylesheet defines (``.series-0`` ... ``.series-7``); more perspectives reuse them."""
OPEN_SECTIONS = ("Recommendation", "Escalation")
"""Record sections shown open; the rest start folded."""


@dataclass
class Speech:
    """One reply of a debater: its stance, its satisfaction, and whom it challenges."""

    key: str
    kind: str
    """``position`` (round 0), ``argument`` or ``rebuttal``."""
    text: str
    stance: str
    satisfaction: int | None
    challenges: list[str]
    """Display names of the perspectives it challenges."""
    challenge_text: str
    seq: int


@dataclass
class PollAnswer:
    name: str
    ready: bool | None
    """Yes (ready to synthesise), no, or None when the answer gave neither."""
    text: str


@dataclass
class DesignRound:
    number: int
    """0 for the independent positions."""
    speeches: dict[str, list[Speech]] = field(default_factory=dict)
    """By perspective key, in the perspectives' order."""
    summary: str = ""
    """The moderator's summary of the round."""
    poll: list[PollAnswer] = field(default_factory=list)
    verdict: str = ""
    """The gate reviewer's decision after the round (``continue: ...``, ``escalate: ...``)."""
    checkpoint: str = ""
    """The human's answer at the round's checkpoint."""

    @property
    def poll_tally(self) -> str:
        yes = sum(1 for answer in self.poll if answer.ready)
        return f"{yes} of {len(self.poll)} ready"


@dataclass
class Chart:
    """The satisfaction chart: one polyline per perspective over the rounds, in SVG user units."""

    width: int = 640
    height: int = 240
    pad: int = 36
    rounds: list[int] = field(default_factory=list)
    series: list[dict[str, Any]] = field(default_factory=list)
    """``{"name", "css", "points": "x,y x,y", "dots": [(x, y, round, score)]}`` each."""
    target_y: float | None = None
    target: int | None = None

    def x(self, index: int) -> float:
        span = max(len(self.rounds) - 1, 1)
        return self.pad + index * (self.width - 2 * self.pad) / span

    def y(self, score: float) -> float:
        return self.pad + (100 - score) * (self.height - 2 * self.pad) / 100

    @property
    def ticks(self) -> list[tuple[float, int]]:
        return [(self.y(score), score) for score in (0, 25, 50, 75, 100)]


@dataclass
class RecordSection:
    title: str
    html: Markup
    open: bool


@dataclass
class DesignView:
    perspectives: dict[str, str] = field(default_factory=dict)
    """Key to display name, in speaking order."""
    rounds: list[DesignRound] = field(default_factory=list)
    challenges: dict[str, dict[str, int]] = field(default_factory=dict)
    """Challenger name to challenged name to how many replies challenged it."""
    chart: Chart = field(default_factory=Chart)
    escalation: EscalationView = field(default_factory=lambda: EscalationView(status="none"))
    record_head: Markup | None = None
    """The decision record above its first section (title, status, date...)."""
    record: list[RecordSection] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return list(self.perspectives.values())


def build_design_view(
    turns: Sequence[TurnRecord],
    live: LiveView,
    escalation: EscalationView,
    report: str | None,
    *,
    target: int | None,
) -> DesignView:
    """The design page's content from the session's ``turns``, its event fold ``live`` and its record ``report``."""
    view = DesignView(escalation=escalation)
    view.perspectives = _perspectives(turns)
    for turn in turns:
        if turn.phase in SPEECH_PHASES and turn.agent_id not in view.perspectives:
            view.perspectives[turn.agent_id] = _display(turn.agent_id)
    rounds: dict[int, DesignRound] = {}

    def round_of(number: int) -> DesignRound:
        return rounds.setdefault(number, DesignRound(number))

    for turn in turns:
        if turn.phase in SPEECH_PHASES:
            speech = _speech(turn, view.perspectives)
            round_of(turn.round).speeches.setdefault(turn.agent_id, []).append(speech)
            for challenged in speech.challenges:
                row = view.challenges.setdefault(view.perspectives[turn.agent_id], {})
                row[challenged] = row.get(challenged, 0) + 1
        elif turn.phase == "moderation" and turn.agent_role == "moderator":
            round_of(turn.round).summary = turn.content.strip()
        elif turn.phase == "poll":
            name = view.perspectives.get(turn.agent_id, _display(turn.agent_id))
            round_of(turn.round).poll.append(PollAnswer(name, parse_poll_answer(turn.content), turn.content.strip()))
        elif turn.phase == "gate" and turn.agent_id == "gate-reviewer":
            round_of(turn.round).verdict = turn.content.splitlines()[0] if turn.content else ""
        elif turn.phase == "checkpoint" and turn.agent_role == "human":
            round_of(turn.round).checkpoint = turn.content
    order = list(view.perspectives)
    for record in rounds.values():
        record.speeches = {key: record.speeches[key] for key in order if key in record.speeches}
    view.rounds = [rounds[number] for number in sorted(rounds)]
    view.chart = _chart(view, live, target)
    if report is not None:
        view.record_head, view.record = record_sections(report)
    return view


def record_sections(markdown: str) -> tuple[Markup, list[RecordSection]]:
    """The record's text above its first ``##`` section, and each section rendered on its own."""
    head: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    in_fence = False
    for line in markdown.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if line.startswith("## ") and not in_fence:
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            head.append(line)
    return render_markdown("".join(head)), [
        RecordSection(title, render_markdown("".join(lines)), title in OPEN_SECTIONS) for title, lines in sections
    ]


def _perspectives(turns: Sequence[TurnRecord]) -> dict[str, str]:
    """Key to name of the debaters the moderator chose (the analysis turn), in speaking order."""
    for turn in turns:
        chosen = turn.metadata.get("perspectives") if turn.phase == "analysis" else None
        if isinstance(chosen, list):
            found = {
                str(item["key"]): str(item.get("name") or _display(str(item["key"])))
                for item in chosen
                if isinstance(item, Mapping) and item.get("key")
            }
            if found:
                return found
    return {}


def _display(key: str) -> str:
    return key.replace("-", " ").replace("_", " ").title()


def _speech(turn: TurnRecord, names: Mapping[str, str]) -> Speech:
    parsed = parse_speech(turn.content, names, own=turn.agent_id)
    return Speech(
        key=turn.agent_id,
        kind=SPEECH_PHASES[turn.phase],
        text=turn.content,
        stance=parsed.stance,
        satisfaction=parsed.satisfaction,
        challenges=[names.get(key, key) for key in parsed.challenges],
        challenge_text=parsed.challenge_text if parsed.challenges else "",
        seq=turn.seq,
    )


def _chart(view: DesignView, live: LiveView, target: int | None) -> Chart:
    """Each perspective's satisfaction after each round: the engine's reading (``RoundCompleted``), else the speeches'."""
    scores: dict[int, dict[str, int]] = {result.round: dict(result.scores) for result in live.rounds if result.round}
    for record in view.rounds:
        if record.number == 0 or record.number in scores:
            continue
        found = {}
        for key, speeches in record.speeches.items():
            said = [s.satisfaction for s in speeches if s.satisfaction is not None]
            if said:
                found[key] = said[-1]
        if found:
            scores[record.number] = found
    chart = Chart(rounds=sorted(scores), target=target)
    if target is not None:
        chart.target_y = chart.y(target)
    for index, (key, name) in enumerate(view.perspectives.items()):
        dots = [
            (chart.x(i), chart.y(scores[number][key]), number, scores[number][key])
            for i, number in enumerate(chart.rounds)
            if key in scores[number]
        ]
        if dots:
            chart.series.append(
                {
                    "name": name,
                    "css": f"series-{index % SERIES_CLASSES}",
                    "points": " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in dots),
                    "dots": dots,
                }
            )
    return chart
