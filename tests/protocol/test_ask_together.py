"""Authors sharing a model, a prompt and a temperature draft in one batched call, each reply its own turn."""

from __future__ import annotations

from collections.abc import Sequence

from tests.protocol.conftest import ADD_TASK, AUTHORS_ONLY, LATE_PHASES_OFF, Harness
from tests.support.debaters import add_debater

from debatecode.llm.transport import CompletionRequest, RawCompletion
from debatecode.task import load_task


class _BatchingModel:
    """A transport that can batch, as the embedded model's: every draft is plain addition."""

    def __init__(self) -> None:
        self.batches: list[tuple[list[int], float, str]] = []
        self.singles: list[dict[str, str]] = []
        self._debater = add_debater(style_variants=False)

    async def __call__(self, request: CompletionRequest) -> RawCompletion:
        self.singles.append(request.tags)
        text = self._debater(request.messages, request.tags)
        return RawCompletion(text=text, prompt_tokens=40, completion_tokens=len(text.split()))

    async def complete_batch(self, request: CompletionRequest, seeds: Sequence[int]) -> list[RawCompletion]:
        self.batches.append((list(seeds), request.temperature, request.tags["kind"]))
        text = self._debater(request.messages, request.tags)
        return [RawCompletion(text=text, prompt_tokens=40, completion_tokens=7 + i) for i, _ in enumerate(seeds)]


async def test_sampled_authors_draft_together_and_each_reply_is_a_turn(harness: Harness) -> None:
    model = harness.scripted("batching", [])
    config = harness.config(
        model,
        agents=4,
        **{
            "phases.adjudication": False,
            "phases.critique": False,
            "phases.review": False,
            **LATE_PHASES_OFF,
            "phases.dehallucination": False,
            **AUTHORS_ONLY,
            "participants.teacher": False,
            "reflexion.in_debate": False,
        },
    )
    transport = _BatchingModel()
    engine, store = harness.engine(config, transport=transport)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed", result.error
    # agent-1 decodes greedily on its own; agents 2-4 sample at the same temperature: one batch of three seeds.
    assert transport.batches == [([2, 3, 4], config.llm.temperature, "draft")]
    assert [t["agent"] for t in transport.singles if t["kind"] == "draft"] == ["agent-1"]
    drafts = {t.agent_id: t for t in store.turns(result.session.id) if t.metadata.get("kind") == "draft"}
    assert set(drafts) == {"agent-1", "agent-2", "agent-3", "agent-4"}
    assert [drafts[a].metadata.get("batch_size") for a in ("agent-2", "agent-3", "agent-4")] == [3, 3, 3]
    assert [drafts[a].prompt_tokens for a in ("agent-2", "agent-3", "agent-4")] == [40, 0, 0], "prompt charged once"
    assert [drafts[a].metadata["seed"] for a in ("agent-2", "agent-3", "agent-4")] == [2, 3, 4]
    assert all(t.code for t in drafts.values())


async def test_draft_batch_1_asks_one_at_a_time(harness: Harness) -> None:
    model = harness.scripted("unbatched", [])
    config = harness.config(
        model,
        agents=3,
        skeleton=True,
        **{"llm.draft_batch": 1, "reflexion.in_debate": False},
    )
    transport = _BatchingModel()
    engine, _ = harness.engine(config, transport=transport)
    result = await engine.solve(load_task(ADD_TASK))
    assert result.status == "completed", result.error
    assert transport.batches == []
    assert sorted(t["agent"] for t in transport.singles if t["kind"] == "draft") == ["agent-1", "agent-2", "agent-3"]
