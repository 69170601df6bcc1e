"""The information barrier: agents never see the gold patch, the test patch, the hidden tests or the hints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.bench_swebench.solve_fixtures import (
    GOLD_PATCH,
    GOLD_SENTINEL,
    GOOD_EDIT,
    HINT_SENTINEL,
    MIN_EDIT,
    TEST_PATCH,
    TEST_SENTINEL,
    CalcSetup,
    FakeChecker,
    config_for,
    scripted,
)

from debatecode.bench.swebench.solve import generate_predictions


def _secrets(setup: CalcSetup) -> list[str]:
    instance = setup.instance
    gold_added = [line[1:].strip() for line in GOLD_PATCH.splitlines() if line.startswith("+ ")]
    test_added = [line[1:].strip() for line in TEST_PATCH.splitlines() if line.startswith("+") and line[1:].strip()]
    return [
        GOLD_SENTINEL,
        TEST_SENTINEL,
        HINT_SENTINEL,
        *instance.FAIL_TO_PASS,
        instance.patch.strip(),
        instance.test_patch.strip(),
        *[line for line in gold_added if len(line) > 12],
        *[line for line in test_added if not line.startswith("+")],
    ]


@pytest.mark.parametrize("strategy", ["single", "debate"])
async def test_no_prompt_holds_gold_test_patch_hidden_tests_or_hints(
    calc: CalcSetup, tmp_path: Path, strategy: str
) -> None:
    seen: list[str] = []

    def recorder(messages: list[dict[str, str]], tags: dict[str, str]) -> str:
        seen.extend(message["content"] for message in messages)
        if tags["kind"] == "vote":
            return "Ranking: 1 > 2"
        return MIN_EDIT if tags["agent"] == "agent-2" else GOOD_EDIT

    checker = FakeChecker()
    with scripted(f"solve-barrier-{strategy}", recorder) as model:
        await generate_predictions(
            calc.harness,
            [calc.instance],
            config=config_for(model, tmp_path, agents=2),
            strategy=strategy,
            out=calc.out,
            checker=checker,
        )
    assert seen, "the model was never called"
    if strategy == "debate":
        assert any("Ranking" in text for text in seen)  # the critique prompt was recorded too
    secrets = _secrets(calc)
    for text in seen:
        for secret in secrets:
            assert secret not in text, f"a prompt leaks {secret!r}"
    # The statement and the repository are what the agents get.
    assert calc.instance.problem_statement.strip() in seen[1]
    assert "def clamp(value: int, low: int, high: int) -> int:" in seen[1]
    # The record on disk (the transcript) holds no secret either.
    stored = (calc.out / "solve" / "local__calc-1.json").read_text()
    for secret in (GOLD_SENTINEL, TEST_SENTINEL, HINT_SENTINEL, *calc.instance.FAIL_TO_PASS):
        assert secret not in stored
    # Checks ran the candidates only: nothing of the test patch reached the checker.
    assert all(TEST_SENTINEL not in patch and GOLD_SENTINEL not in patch for patch in checker.patches)
    assert json.loads(stored)["retrieved"]
