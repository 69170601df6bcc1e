"""One stored session as an inspect_ai eval log (``inspect_export.session_eval_log``).

The log has one sample: the task is the input, the final code the output, the
visible tests the score (a design debate: its decision), every model turn an
assistant message and a model event with its prompt, reply and tokens, every
tool, human and memory turn an info event, each run of turns in one round and
phase a span, and the tokens the model usage (per model and per role).

Imported only once inspect_ai is known to be there (``require_inspect``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_ai.event import Event, InfoEvent, ModelEvent, ScoreEvent, SpanBeginEvent, SpanEndEvent
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalPlanStep,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    EvalStatus,
)
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score

from debatecode import __version__

if TYPE_CHECKING:
    from debatecode.store.records import SessionRecord, TurnRecord
    from debatecode.store.repository import SessionStore

__all__ = ["model_output", "session_log", "utc_iso"]

_NOT_MODELS = ("tool", "human", "memory", "")
"""Turn providers that are not model calls (as ``bench.humaneval.scored_session`` counts spend)."""

_VISIBLE_TESTS = "visible_tests"
_STATUS: dict[str, EvalStatus] = {
    "completed": "success",
    "failed": "error",
    "budget_exceeded": "error",
    "cancelled": "cancelled",
}
"""Session status -> eval log status; a pending, running or paused session is ``started``."""
_PROMPT_PART = re.compile(r"(?:^|\n\n)\[(system|user|assistant)\]\n")


def session_log(store: SessionStore, session_id: str) -> EvalLog:
    """Session ``session_id`` (a unique prefix is enough) as an eval log with one sample.

    Raises:
        SessionNotFound: no such session.
    """
    session = store.get_session(session_id)
    turns = store.turns(session.id)
    answer = _final_answer(store, session)
    score = _session_score(session, answer)
    usage = _usage(turns, lambda turn: turn.model or session.model)
    output = model_output(session.model or "none", answer, f"{session.id}-final")
    task_text = _task_text(session)
    created = utc_iso(session.created_at)
    error = _error(session.error)
    sample = EvalSample(
        id=session.id,
        epoch=1,
        input=task_text,
        target="",
        messages=_session_messages(session.id, task_text, turns),
        output=output,
        scores={_score_name(session): score},
        metadata={"status": session.status, **session.outcome},
        events=[*_session_events(session, turns), _score_event(session, score)],
        model_usage=usage,
        role_usage=_usage(turns, lambda turn: turn.agent_role),
        started_at=created,
        completed_at=utc_iso(session.completed_at) if session.completed_at else None,
        total_time=session.duration_s,
        working_time=session.duration_s,
        uuid=session.id,
        error=error,
    )
    metrics = _mean_metric(score.value)
    return EvalLog(
        status=_STATUS.get(session.status, "started"),
        eval=EvalSpec(
            eval_id=session.id,
            run_id=session.id,
            created=created,
            task=f"debatecode_{'debate' if session.kind == 'design' else 'solve'}",
            task_id=session.id,
            task_display_name=session.task_title,
            task_file=session.task_path or None,
            task_description=session.topic or None,
            solver=str(session.config.get("strategy") or "debate"),
            dataset=EvalDataset(
                name=session.task_title, location=session.task_path, samples=1, sample_ids=[session.id]
            ),
            model=session.model or "none",
            config=EvalConfig(token_limit=session.config.get("token_budget")),
            packages={"debatecode": __version__},
            metadata={
                "session_id": session.id,
                "kind": session.kind,
                "topology": session.topology,
                "coordination_protocol": session.coordination_protocol,
                "branch": session.branch,
                "out_dir": session.out_dir,
                "cost_usd": session.cost_usd,
            },
        ),
        plan=EvalPlan(steps=[EvalPlanStep(solver=phase) for phase in dict.fromkeys(t.phase for t in turns)]),
        results=EvalResults(
            total_samples=1,
            completed_samples=1 if session.status == "completed" else 0,
            scores=[
                EvalScore(name=_score_name(session), scorer=_score_name(session), scored_samples=1, metrics=metrics)
            ],
        ),
        stats=EvalStats(
            started_at=created,
            completed_at=utc_iso(session.completed_at) if session.completed_at else "",
            model_usage=usage,
        ),
        error=error,
        samples=[sample],
    )


def _score_name(session: SessionRecord) -> str:
    """``visible_tests`` for a code session, ``decision`` for a design debate."""
    return "decision" if session.kind == "design" else _VISIBLE_TESTS


def _final_answer(store: SessionStore, session: SessionRecord) -> str:
    """The final code (the winning version), or a design debate's decision record (its ADR, else the recommendation)."""
    if session.kind == "design":
        adr = session.outcome.get("adr")
        path = Path(adr) if isinstance(adr, str) and adr else None
        if path is not None and path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
        return str(session.outcome.get("recommendation") or "")
    wanted = session.final_version_id or session.outcome.get("version_id")
    final = next((v for v in store.versions(session.id) if v.id == wanted), None)
    return final.code if final is not None else ""


def _session_score(session: SessionRecord, answer: str) -> Score:
    """A code session's visible tests as a pass rate; a design debate's decision status."""
    outcome = session.outcome
    if session.kind == "design":
        return Score(
            value=str(outcome.get("record_status") or session.status),
            answer=str(outcome.get("recommendation") or ""),
            explanation=f"confidence {outcome.get('confidence') or '-'}; {outcome.get('stop_reason') or ''}".strip(),
            metadata={"escalation": outcome.get("escalation")},
        )
    passed, total = int(outcome.get("passed") or 0), int(outcome.get("total") or 0)
    if total:
        explanation = f"{passed}/{total} visible tests pass"
        method, reason = outcome.get("method"), outcome.get("reason")
        if method:
            explanation += f"; chosen by {method}" + (f": {reason}" if reason else "")
    else:
        explanation = f"no final code ({session.status})" if not answer else "no visible test was run"
    return Score(
        value=passed / total if total else 0.0,
        answer=answer,
        explanation=explanation,
        metadata={"passed": passed, "total": total, "winner": outcome.get("winner")},
    )


def _mean_metric(value: Any) -> dict[str, Any]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return {}
    return {"mean": EvalMetric(name="mean", value=float(value))}


def _task_text(session: SessionRecord) -> str:
    """The task file's text when it is still there and unchanged (its sha256 matches), else title and description."""
    path = Path(session.task_path) if session.task_path else None
    try:
        if path is not None and path.is_file():
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() == session.task_hash:
                return data.decode("utf-8", errors="replace")
    except OSError:
        pass
    return f"# {session.task_title}\n\n{session.topic}".rstrip() + "\n"


def _is_model_turn(turn: TurnRecord) -> bool:
    return turn.provider not in _NOT_MODELS


def _usage(turns: Iterable[TurnRecord], key: Callable[[TurnRecord], str]) -> dict[str, ModelUsage]:
    """Prompt and completion tokens (and cost) of the model turns, summed per ``key(turn)``."""
    totals: dict[str, ModelUsage] = {}
    for turn in turns:
        if not _is_model_turn(turn):
            continue
        name = str(key(turn) or "none")
        totals[name] = totals.get(name, ModelUsage()) + _turn_usage(turn)
    return totals


def _turn_usage(turn: TurnRecord) -> ModelUsage:
    return ModelUsage(
        input_tokens=turn.prompt_tokens,
        output_tokens=turn.completion_tokens,
        total_tokens=turn.prompt_tokens + turn.completion_tokens,
        total_cost=turn.cost_usd or None,
    )


def model_output(model: str, content: str, message_id: str) -> ModelOutput:
    """A model output of ``content`` whose message has the id ``message_id`` (inspect would draw a random one)."""
    output = ModelOutput.from_content(model=model, content=content)
    output.choices[0].message.id = message_id
    return output


def _prompt_messages(prompt: str, key: str) -> list[ChatMessage]:
    """A stored prompt split back into its chat messages (``[system]``, ``[user]``... parts); else one user message.

    The messages' ids are ``<key>-in<i>``, so the same session always exports the same log.
    """
    parts = _PROMPT_PART.split(prompt)
    if len(parts) < 3 or parts[0].strip():
        return [ChatMessageUser(id=f"{key}-in0", content=prompt, source="input")]
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    pairs = zip(parts[1::2], parts[2::2], strict=True)
    return [kinds[role](id=f"{key}-in{i}", content=text, source="input") for i, (role, text) in enumerate(pairs)]


def _turn_metadata(turn: TurnRecord) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "seq": turn.seq,
        "round": turn.round,
        "phase": turn.phase,
        "agent": turn.agent_id,
        "role": turn.agent_role,
        "status": turn.status,
        "kind": turn.metadata.get("kind"),
    }
    if turn.test_results:
        cases = turn.test_results.get("cases") or []
        passed = sum(1 for case in cases if case.get("outcome") == "passed")
        metadata["tests"] = f"{passed}/{len(cases)}"
    return metadata


def _session_messages(session_id: str, task_text: str, turns: Sequence[TurnRecord]) -> list[ChatMessage]:
    """The task, then every model turn's reply as an assistant message labelled with its agent, phase and round."""
    messages: list[ChatMessage] = [ChatMessageUser(id=f"{session_id}-task", content=task_text, source="input")]
    for turn in turns:
        if _is_model_turn(turn):
            messages.append(
                ChatMessageAssistant(
                    id=turn.id,
                    content=turn.content,
                    model=turn.model or None,
                    source="generate",
                    metadata=_turn_metadata(turn),
                )
            )
    return messages


def _session_events(session: SessionRecord, turns: Sequence[TurnRecord]) -> list[Event]:
    """One span per run of turns in the same round and phase; a model event per model turn, an info event per other.

    Every event's uuid comes from its turn or span, so the same session always exports the same events.
    """
    events: list[Event] = []
    span: str | None = None
    current: tuple[int, str] | None = None
    for turn in turns:
        started = turn.created_at - timedelta(milliseconds=turn.response_time_ms)
        offset = max(0.0, (started - session.created_at).total_seconds())
        if (turn.round, turn.phase) != current:
            if span is not None:
                events.append(
                    SpanEndEvent(uuid=f"{span}-end", id=span, span_id=span, timestamp=started, working_start=offset)
                )
            current = (turn.round, turn.phase)
            span = f"{len(events)}-r{turn.round}-{turn.phase}"
            name = f"round {turn.round}: {turn.phase}"
            events.append(
                SpanBeginEvent(
                    uuid=f"{span}-begin",
                    id=span,
                    span_id=span,
                    name=name,
                    type="phase",
                    timestamp=started,
                    working_start=offset,
                )
            )
        if _is_model_turn(turn):
            output = model_output(turn.model or session.model or "none", turn.content, f"{turn.id}-out")
            output.usage = _turn_usage(turn)
            output.time = turn.response_time_ms / 1000
            seed, temperature = turn.metadata.get("seed"), turn.metadata.get("temperature")
            events.append(
                ModelEvent(
                    uuid=f"{turn.id}-model",
                    model=turn.model or session.model or "none",
                    role=turn.agent_role,
                    input=_prompt_messages(turn.prompt, turn.id),
                    tools=[],
                    tool_choice="none",
                    config=GenerateConfig(
                        seed=seed if isinstance(seed, int) else None,
                        temperature=float(temperature) if isinstance(temperature, int | float) else None,
                    ),
                    output=output,
                    timestamp=started,
                    completed=turn.created_at,
                    working_start=offset,
                    working_time=turn.response_time_ms / 1000,
                    span_id=span,
                    metadata=_turn_metadata(turn),
                )
            )
        else:
            data: dict[str, Any] = {"agent": turn.agent_id, "content": turn.content, "tool_calls": turn.tool_calls}
            events.append(
                InfoEvent(
                    uuid=f"{turn.id}-info",
                    source=f"{turn.agent_id} · {turn.phase}",
                    data=data,
                    timestamp=turn.created_at,
                    working_start=offset,
                    span_id=span,
                    metadata=_turn_metadata(turn),
                )
            )
    if span is not None:
        end = turns[-1].created_at
        events.append(
            SpanEndEvent(
                uuid=f"{span}-end",
                id=span,
                span_id=span,
                timestamp=end,
                working_start=(end - session.created_at).total_seconds(),
            )
        )
    return events


def _score_event(session: SessionRecord, score: Score) -> Event:
    """The sample's final score, when the session ended (or was last updated, for one still running)."""
    return ScoreEvent(
        uuid=f"{session.id}-score",
        score=score,
        target="",
        timestamp=session.completed_at or session.updated_at,
        working_start=session.duration_s,
    )


def _error(message: str | None) -> EvalError | None:
    return EvalError(message=message, traceback="", traceback_ansi="") if message else None


def utc_iso(moment: datetime) -> str:
    """``moment`` as inspect writes times: ISO 8601 in UTC, to the second (a naive time is taken as UTC)."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="seconds")
