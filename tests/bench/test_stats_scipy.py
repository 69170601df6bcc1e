"""bench/_stats.py on scipy gives the numbers the hand-written formulas gave.

The pinned values below were computed by the hand-written Wilson interval (z = 1.96) and
exact McNemar sum (``2 * sum(C(n, i) for i <= min(b, c)) / 2**n``) before they were replaced.
scipy's Wilson interval uses the exact 97.5% normal quantile (1.959964...) rather than 1.96, so
its bounds move by less than 1e-5; every report prints them to two decimals.
"""

from __future__ import annotations

import pytest

from debatecode.bench._stats import mcnemar_exact_p, paired_test, wilson_interval

OLD_WILSON = {
    (0, 40): (0.0, 0.08762453925039232),
    (20, 40): (0.35199278797099753, 0.6480072120290025),
    (40, 40): (0.9123754607496077, 1.0),
    (1, 1): (0.20654329147389294, 1.0),
    (0, 1): (0.0, 0.7934567085261071),
    (3, 10): (0.10778928748621183, 0.6032267800204347),
    (97, 164): (0.5149725895781713, 0.6637673652363681),
    (6, 164): (0.016873104917696027, 0.07751112402197088),
}

OLD_MCNEMAR = {
    (0, 0): 1.0,
    (6, 0): 0.03125,
    (3, 5): 0.7265625,
    (10, 2): 0.03857421875,
    (2, 10): 0.03857421875,
    (1, 1): 1.0,
    (7, 3): 0.34375,
    (20, 5): 0.004077315330505371,
    (0, 30): 1.862645149230957e-09,
    (12, 12): 1.0,
    (50, 60): 0.39092745669950485,
}


@pytest.mark.parametrize(("passed", "n"), sorted(OLD_WILSON))
def test_wilson_interval_equals_the_hand_written_one(passed: int, n: int) -> None:
    low, high = wilson_interval(passed, n)
    old_low, old_high = OLD_WILSON[(passed, n)]
    assert low == pytest.approx(old_low, abs=1e-5) and high == pytest.approx(old_high, abs=1e-5)
    assert f"{low:.2f}-{high:.2f}" == f"{old_low:.2f}-{old_high:.2f}", "the report's rendering is unchanged"
    assert isinstance(low, float) and isinstance(high, float)


def test_wilson_interval_of_no_problems_is_everything() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("wins", "losses"), sorted(OLD_MCNEMAR))
def test_mcnemar_p_equals_the_hand_written_one(wins: int, losses: int) -> None:
    p = mcnemar_exact_p(wins, losses)
    assert p == pytest.approx(OLD_MCNEMAR[(wins, losses)], rel=1e-12, abs=1e-15)
    assert isinstance(p, float)


def test_paired_test_counts_the_discordant_pairs_and_tests_them() -> None:
    first = {"a": True, "b": True, "c": False, "d": True, "only-first": True}
    second = {"a": True, "b": False, "c": True, "d": False, "only-second": False}
    test = paired_test("debate", first, "single", second)
    assert (test.problems, test.b, test.c) == (4, 2, 1)
    assert test.p == pytest.approx(1.0)
