"""``debatecode sessions replay`` of a design debate: re-run it from its audit trail, its speeches shown again.

A design debate has no task file: its question (and context) is stored in the
session's config, so the trail carries it. The replay runs the design engine
with a scripted model answering every model turn with its recorded reply, and a
human repeating the recorded decisions (checkpoints, the clarifying answer, the
choice at an escalation). The speeches, rounds and gate verdicts are printed
as they replay (the live debate renderer), and the replayed decision record is
written under ``--out``. It reproduces the session when it stores as many
turns and ends in the same record (status, recommendation, escalation choice).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from rich.markup import escape

from debatecode.cli.common import console
from debatecode.errors import ConfigError
from debatecode.protocol.audit import ReplayHuman

__all__ = ["DesignReplayHuman", "replay_design"]

_NOT_CONFIG = ("question", "models", "agent_models")
"""Stored keys that are not replayed as they were: the question is read separately, per-role models are
replaced by the replay model."""


class DesignReplayHuman(ReplayHuman):
    """Repeats a design debate's recorded human decisions, the clarifying answer and the escalation choice too."""

    def __init__(self, audit: dict[str, Any]) -> None:
        super().__init__(audit)
        human = [t for t in audit["turns"] if t.get("agent_role") == "human"]
        # Each escalation's recorded answer, in the order they were asked (a guided round can escalate again).
        self._choices = [
            (t["metadata"].get("choice"), t["metadata"].get("guidance"))
            for t in sorted(human, key=lambda t: t.get("seq", 0))
            if t.get("phase") == "escalation"
        ]
        clarified = next((t["metadata"].get("clarification") for t in human if t.get("phase") == "analysis"), None)
        self._clarification = clarified.get("answer") if isinstance(clarified, dict) else None

    async def answer_questions(self, questions: list[dict[str, str]]) -> list[str] | None:
        if self._clarification:
            return [str(self._clarification)]
        return await super().answer_questions(questions)

    async def choose(self, title: str, summary: str, options: list[tuple[str, str]]) -> tuple[str, str | None] | None:
        choice, guidance = self._choices.pop(0) if self._choices else (None, None)
        return (str(choice), guidance) if choice else None


def _config(trail: dict[str, Any], model: str, store_url: str) -> Any:
    from pydantic import ValidationError

    from debatecode.config import DebateConfig

    stored = {k: v for k, v in trail["config"].items() if k not in _NOT_CONFIG}
    design = dict(stored.get("design") or {})
    design["models"] = {}  # every stage answers from the recording
    asked = any(t.get("phase") == "checkpoint" and t.get("agent_role") == "human" for t in trail["turns"])
    if not asked:  # nobody was asked at the checkpoints then: nobody is now (an extra turn would diverge)
        stored["checkpoints"] = {**(stored.get("checkpoints") or {}), "enabled": False}
    try:
        return DebateConfig.model_validate({**stored, "design": design, "model": model, "store_url": store_url})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(
            f"the config in the audit trail is not valid for this debatecode: {exc.error_count()} problem(s), "
            f"first: {first['loc']}: {first['msg']}"
        ) from exc


def _question(trail: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    from debatecode.protocol.design.question import DesignQuestion

    stored = trail["config"].get("question")
    if not isinstance(stored, dict):
        raise ConfigError("the audit trail of this design debate does not include its question; replay needs it")
    try:
        return DesignQuestion.model_validate(stored)
    except ValidationError as exc:
        raise ConfigError(f"the question in the audit trail is malformed: {exc.errors()[0]['msg']}") from exc


async def _run(question: Any, config: Any, out: Path, trail: dict[str, Any]) -> tuple[Any, int]:
    from debatecode.cli.debate_render import DebateRenderer
    from debatecode.llm.client import LLMClient
    from debatecode.protocol.design.engine import DesignEngine
    from debatecode.protocol.events import EventBus
    from debatecode.store import open_store

    bus = EventBus()
    renderer = DebateRenderer(console)
    bus.subscribe(renderer)
    store = open_store(config.store_url)
    llm = LLMClient(config.llm)
    try:
        engine = DesignEngine(config, llm=llm, store=store, repo=out, bus=bus, human=DesignReplayHuman(trail))
        with renderer:
            result = await engine.debate(question)
        return result, len(store.turns(result.session.id))
    finally:
        await llm.aclose()
        store.close()


def _recorded_turns(trail: dict[str, Any]) -> int:
    # A resume's settings note (phase "resume") is no debate turn: a replay runs with the final settings at once.
    return len([t for t in trail["turns"] if t.get("phase") != "resume"])


def replay_design(trail: dict[str, Any], out: Path, config_file: Path | None) -> int:
    """Replay a design debate's audit trail; 0 when it reproduces the session, 1 when it diverges.

    Raises:
        ConfigError: the trail has no question, or its config does not load here.
    """
    from debatecode.config import load_config
    from debatecode.llm.scripted import register_scripted, unregister_scripted
    from debatecode.protocol.audit import replay_model

    question = _question(trail)
    name = f"replay-{uuid.uuid4().hex[:8]}"
    config = _config(trail, f"scripted/{name}", load_config(config_file).store_url)
    out.mkdir(parents=True, exist_ok=True)
    register_scripted(name, replay_model(trail))
    try:
        result, turns = asyncio.run(_run(question, config, out, trail))
    finally:
        unregister_scripted(name)
    original = trail.get("outcome") or {}
    replayed = result.session.outcome or {}
    compared = ("record_status", "recommendation", "confidence")
    same = turns == _recorded_turns(trail) and all(original.get(k) == replayed.get(k) for k in compared)
    same = same and (original.get("escalation") or {}).get("choice") == (replayed.get("escalation") or {}).get("choice")
    console.print(
        f"replayed design debate {escape(trail['session']['id'])} as {result.session.id}: {turns} turns "
        f"(original {_recorded_turns(trail)}), {result.record.rounds if result.record else 0} rounds, "
        f"record {replayed.get('record_status')} (original {original.get('record_status')}), status {result.status}",
        soft_wrap=True,
    )
    if result.adr_path is not None:
        console.print(f"decision record: {escape(str(result.adr_path))}", soft_wrap=True)
    if result.record is not None:
        rec = result.record.recommendation
        console.print(f"[bold]Recommendation[/] ({rec.confidence}): {escape(rec.text)}", soft_wrap=True)
    console.print(
        "[green]the replay reproduces the session[/]" if same else "[red]the replay diverged from the original[/]"
    )
    return 0 if same else 1
