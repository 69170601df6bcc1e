"""``HumanEvalSetup``: a run's settings in one object, normalised and checked when it is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from debatecode.bench.humaneval.run import run_humaneval
from debatecode.bench.humaneval.setup import VOTE_SAMPLE, HumanEvalSetup
from debatecode.config import load_config
from debatecode.errors import ConfigError

BASE = load_config(use_file=False)


def test_a_setup_is_normalised_once() -> None:
    setup = HumanEvalSetup(config=BASE, strategies=["vote", "single", "vote"], out="x", vote_n=[9, 3, 9])
    assert setup.strategies == ("vote", "single")
    assert setup.out == Path("x")
    assert setup.vote_n == (3, 9)
    assert setup.base is BASE
    assert HumanEvalSetup(config=BASE, strategies=["single"], vote_n=[3]).vote_n == (), "vote sizes need the vote"


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"strategies": ["best-of"]}, "unknown or no strategy ['best-of']"),
        ({"strategies": []}, "unknown or no strategy"),
        ({"samples": 0}, "a vote needs at least one sample"),
        ({"vote_n": [0]}, "a vote needs at least one sample"),
        ({"max_attempts": 0}, "at least one attempt"),
        ({"strategies": ["single"], "match_spend": "debate"}, "needs its reference 'debate'"),
        ({"executor": "slurm"}, "unknown executor 'slurm'"),
        ({"ray_address": "auto"}, "needs --executor ray"),
    ],
)
def test_a_bad_setting_is_refused_when_the_setup_is_built(settings: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError, match=words.replace("[", r"\[").replace("]", r"\]")):
        HumanEvalSetup(config=BASE, **settings)  # type: ignore[arg-type]  # the wrong types are the point


def test_each_strategy_gets_its_config_and_the_vote_its_one_sample_config() -> None:
    setup = HumanEvalSetup(config=BASE, strategies=["single", "vote", "debate"], samples=4, agents=2, sandbox="local")
    configs = setup.strategy_configs()
    assert list(configs) == ["single", "vote", "debate", VOTE_SAMPLE]
    assert (configs["single"].agents, configs["vote"].agents, configs["debate"].agents) == (1, 4, 2)
    assert configs[VOTE_SAMPLE].agents == 1
    assert {config.sandbox.backend for config in configs.values()} == {"local"}
    assert setup.base.sandbox.backend == BASE.sandbox.backend, "the base config itself is left as it was"


def test_run_humaneval_takes_a_setup_and_keywords_replace_its_fields(tmp_path: Path) -> None:
    setup = HumanEvalSetup(config=BASE, strategies=["single"], out=tmp_path / "out")
    with pytest.raises(ConfigError, match="unknown or no strategy"):
        run_humaneval([], setup, strategies=["best-of"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'sample'"):
        run_humaneval([], setup, sample=3)
    assert not (tmp_path / "out").exists(), "nothing was run or written"
