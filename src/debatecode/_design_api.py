"""``debate()`` and ``debate_async()``: design debates from Python, as ``debatecode debate`` runs them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatecode._api import apply_overrides, run_sync
from debatecode.config import DebateConfig, load_config
from debatecode.errors import ConfigError, TaskError

if TYPE_CHECKING:
    from debatecode.protocol.design.engine import DesignResult
    from debatecode.protocol.design.question import DesignQuestion
    from debatecode.protocol.events import EventBus
    from debatecode.protocol.human import HumanInterface

__all__ = ["debate", "debate_async", "stored_debate"]


def stored_debate(config: DebateConfig, session_id: str) -> tuple[DebateConfig, DesignQuestion]:
    """The config and question a stored design debate resumes with.

    The config is the stored one, with the limits, budgets, models and checkpoint settings given in
    ``config`` (flags, config file, environment: ``protocol.resume.RESUMABLE``) on top, and ``config``'s
    store URL.

    Raises:
        SessionNotFound: no such session.
        TaskError: the session is a code debate.
        ConfigError: the settings given do not fit the stored ones.
    """
    from debatecode.protocol.design.question import DesignQuestion
    from debatecode.store import open_store

    store = open_store(config.store_url)
    try:
        session = store.get_session(session_id)
    finally:
        store.close()
    if session.kind != "design":
        raise TaskError(
            session_id, "this session is a code debate", fix=f"run `debatecode solve <task.md> --resume {session_id}`"
        )
    from debatecode.protocol.resume import resumed_config

    question = DesignQuestion.model_validate(session.config["question"])
    return resumed_config(session.config, config), question


async def debate_async(
    question: DesignQuestion | str | Path | None,
    config: DebateConfig | None = None,
    *,
    context: Sequence[Path] = (),
    repo: Path | None = None,
    resume: str | None = None,
    bus: EventBus | None = None,
    human: HumanInterface | None = None,
) -> DesignResult:
    """Run a design debate on ``question`` (text, a question file, or a ``DesignQuestion``) to its decision record.

    ``repo`` (default: the current folder) gets ``docs/decisions/adr-NNNN-slug.md``. With ``resume``,
    the stored debate continues with the question and config it started with (``question`` is ignored),
    except for the limits, budgets, models and checkpoint settings ``config`` was given (see ``stored_debate``).

    Raises:
        TaskError: a bad question, question file or context file, or a changed question on resume.
        ConfigError: an unknown perspective (refused before any session is stored).
        UnknownModelError: no provider answers to a model of the config.
        SessionNotFound, StoreError: the store cannot be read or written.
    """
    from debatecode.llm.client import LLMClient, validate_model
    from debatecode.protocol.design.engine import DesignEngine
    from debatecode.protocol.design.question import DesignQuestion, load_question
    from debatecode.store import open_store

    config = config if config is not None else load_config()
    if resume is not None:
        config, parsed = stored_debate(config, resume)
    elif isinstance(question, DesignQuestion):
        parsed = question
    elif question is None:
        raise TaskError("<question>", "no question given", fix='debate("Should we ...?")')
    else:
        parsed = load_question(str(question), context=context)
    validate_model(config.model)
    for tier in config.design.models.values():
        validate_model(tier)
    _check_perspectives(config, parsed)
    store = open_store(config.store_url)
    llm = LLMClient(config.llm)
    try:
        engine = DesignEngine(config, llm=llm, store=store, repo=repo or Path.cwd(), bus=bus, human=human)
        if resume is not None:
            return await engine.resume(resume, parsed)
        return await engine.debate(parsed)
    finally:
        await llm.aclose()
        store.close()


def _check_perspectives(config: DebateConfig, question: DesignQuestion) -> None:
    """Refuse the perspectives a debate asks for before its session is stored, as its analysis would.

    Raises:
        ConfigError: a perspective (of ``design.perspectives`` or the question file) or a council
            member is not in the catalog, or named perspectives are given in council mode.
    """
    from debatecode.protocol.design.panel import select_panel

    select_panel(config.design, question)


def debate(
    question: DesignQuestion | str | Path | None,
    config: DebateConfig | None = None,
    *,
    context: Sequence[Path] = (),
    repo: Path | None = None,
    resume: str | None = None,
    bus: EventBus | None = None,
    human: HumanInterface | None = None,
    **overrides: Any,
) -> DesignResult:
    """``debate_async`` from synchronous code (notebooks too); ``overrides`` as in ``solve()``.

    Example::

        result = debatecode.debate("Should we cache in Redis or PostgreSQL?", design__max_rounds=3)
        print(result.adr_path, result.record.recommendation.confidence)

    Raises:
        ConfigError: an unknown or invalid override, or overrides with ``resume``.
        TaskError, UnknownModelError, StoreError: as ``debate_async``.
    """
    if resume is not None and set(overrides) - {"store_url"}:
        raise ConfigError(
            "a resumed debate runs with the config it started with; drop the overrides (to raise a limit, "
            "budget or model for the resume, pass config=load_config(overrides={...}))"
        )
    effective = config if config is not None else (load_config() if overrides else None)
    if overrides and effective is not None:
        effective = apply_overrides(effective, overrides)
    return run_sync(
        lambda: debate_async(question, effective, context=context, repo=repo, resume=resume, bus=bus, human=human)
    )
