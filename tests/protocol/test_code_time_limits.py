"""A code debate's time limits (``timeout_s``, ``round_timeout_s``): the session stops as failed, resumable."""

from __future__ import annotations

from tests.protocol.conftest import ADD_TASK, GOOD, SKELETON, Harness, reply

from debatecode.task import load_task


async def test_a_step_past_the_session_time_limit_fails_the_session_and_the_resume_finishes_it(
    harness: Harness,
) -> None:
    slow = harness.scripted("slow-drafts", [reply(GOOD, kind="draft", delay_s=5.0)], default=GOOD)
    config = harness.config(slow, agents=1, timeout_s=0.5, **{k.replace(".", "__"): v for k, v in SKELETON.items()})
    engine, store = harness.engine(config)
    task = load_task(ADD_TASK)

    result = await engine.solve(task)

    assert result.status == "failed"
    assert result.error is not None and result.error.startswith(
        "timed out: self_evolvement ran past the debate's time limit of 0.5s (--timeout)"
    )
    assert f"`debatecode solve {task.path} --resume {result.session.id}` continues" in result.error
    assert store.get_session(result.session.id).status == "failed"

    fast = harness.config(slow, agents=1, **{k.replace(".", "__"): v for k, v in SKELETON.items()})
    resumed, _store = harness.engine(fast)
    finished = await resumed.resume(result.session.id, task)
    assert finished.status == "completed" and finished.all_passed


async def test_without_time_limits_a_code_debate_has_none(harness: Harness) -> None:
    model = harness.scripted("quick", [], default=GOOD)
    config = harness.config(model, agents=1, skeleton=True)
    assert (config.timeout_s, config.round_timeout_s) == (None, None)
    engine, _store = harness.engine(config)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed"
