"""The pass-rate difference of paired pass/fail outcomes and its Newcombe (1998, method 10)
interval: a published worked example, a calculation written out by hand, an independent
re-implementation on many tables, and the properties an interval must have."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from evalkit.stats import (
    StatisticsInputError,
    newcombe_interval,
    paired_binary,
    paired_binary_counts,
    wilson_interval,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

Z95 = 1.959963984540054


def straightforward_newcombe(a: int, b: int, c: int, d: int, z: float = Z95) -> tuple[float, float]:
    """Newcombe's method 10 written from the paper's formulas, independently of evalkit: cells
    a (both +), b (first + only), c (second + only), d (both −); θ = (a+b)/n − (a+c)/n."""
    n = a + b + c + d

    def wilson(x: int) -> tuple[float, float]:
        p = x / n
        centre = p + z * z / (2 * n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)

    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b)
    l2, u2 = wilson(a + c)
    if 0 in (a + b, c + d, a + c, b + d):
        phi = 0.0
    else:
        big_a = a * d - b * c
        root = math.sqrt((a + b) * (c + d) * (a + c) * (b + d))
        phi = (big_a - n / 2) / root if big_a > n / 2 else (0.0 if big_a >= 0 else big_a / root)
    theta = p1 - p2
    low = theta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = theta + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return low, high


def test_cavo_worked_example() -> None:
    """Complete response before and after consolidation therapy (Cavo et al. 2012), as worked in
    Fagerland, Lydersen & Laake (2014, Statist. Med. 33:2850; and their book, ch. 8): 59 both,
    6 after only, 16 before only, 80 neither — estimate −0.0621, Newcombe 95 % CI −0.1186 to
    −0.0046, exact conditional McNemar P = 0.052479."""
    result = paired_binary_counts(both_passed=59, regressed=16, fixed=6, both_failed=80)
    assert round(result.delta, 4) == -0.0621
    assert round(result.interval.low, 4) == -0.1186
    assert round(result.interval.high, 4) == -0.0046
    assert round(result.p_value, 6) == 0.052479


def test_a_calculation_written_out_by_hand() -> None:
    """36 both, 12 run only, 2 baseline only, 0 neither (n = 50), z = 1.959964 (z² = 3.841459).

    Wilson: run 48/50 → centre (48 + 1.920729) / 53.841459 = 0.927180, half
    1.959964 √(48·2/50 + 0.960365) / 53.841459 = 0.061781 → [0.865399, 0.988961]; baseline 38/50 →
    centre 39.920729 / 53.841459 = 0.741450, half 1.959964 √(38·12/50 + 0.960365) / 53.841459 =
    0.115576 → [0.625873, 0.857026]. ϕ: A = 36·0 − 12·2 = −24 < 0, so ϕ = −24 / √(48·2·38·12) =
    −0.114708. θ = 0.96 − 0.76 = 0.2;
    L = 0.2 − √(0.094601² + 2·0.114708·0.094601·0.097026 + 0.097026²) = 0.2 − √0.0204691 = 0.056930;
    U = 0.2 + √(0.028961² + 2·0.114708·0.028961·0.134127 + 0.134127²) = 0.2 + √0.0197199 = 0.340428.
    """
    result = paired_binary_counts(both_passed=36, regressed=2, fixed=12, both_failed=0)
    run, base = wilson_interval(48, 50), wilson_interval(38, 50)
    assert (round(run.low, 6), round(run.high, 6)) == (0.865399, 0.988961)
    assert (round(base.low, 6), round(base.high, 6)) == (0.625873, 0.857026)
    assert result.delta == pytest.approx(0.2)
    assert result.interval.low == pytest.approx(0.056930, abs=2e-6)
    assert result.interval.high == pytest.approx(0.340428, abs=2e-6)


TABLES = [  # both passed, regressed, fixed, both failed
    (59, 16, 6, 80), (36, 2, 12, 0), (14, 0, 5, 22), (1, 7, 1, 12), (10, 5, 15, 20), (0, 0, 0, 5), (5, 0, 0, 0),
    (0, 3, 4, 0), (0, 30, 0, 0), (0, 0, 30, 0), (24, 6, 0, 0), (25, 0, 0, 5), (20, 4, 1, 5), (100, 30, 10, 60),
    (1, 1, 1, 1), (0, 1, 0, 0), (2, 0, 1, 0), (300, 12, 8, 80), (7, 9, 3, 11), (18, 1, 1, 10),
    # A = ad − bc exactly n/2 (ϕ = 0 at the edge), and every margin 1 with A < 0 (ϕ = −1)
    (2, 1, 1, 2), (4, 2, 2, 4), (0, 1, 1, 0),
]


@pytest.mark.parametrize("cells", TABLES)
def test_newcombe_equals_a_straightforward_reimplementation(cells: tuple[int, int, int, int]) -> None:
    both, regressed, fixed, neither = cells
    # the run is the "first" measurement: its passes are both + fixed
    expected = straightforward_newcombe(both, fixed, regressed, neither)
    interval = newcombe_interval(both, regressed, fixed, neither)
    assert interval.low == pytest.approx(max(-1.0, expected[0]), abs=1e-12)
    assert interval.high == pytest.approx(min(1.0, expected[1]), abs=1e-12)


def test_wilson_equals_statsmodels() -> None:
    for successes, trials in [(0, 5), (5, 5), (3, 10), (48, 50), (1, 1), (170, 300)]:
        low, high = proportion_confint(successes, trials, alpha=0.05, method="wilson")
        interval = wilson_interval(successes, trials)
        assert (interval.low, interval.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_outcomes_case_by_case_fill_the_table() -> None:
    baseline = [True, True, True, False, False, 1, 0]
    current = [True, False, False, True, False, 1, 1]
    result = paired_binary(baseline, current)
    assert (result.both_passed, result.regressed, result.fixed, result.both_failed) == (2, 2, 2, 1)
    assert (result.baseline_rate, result.rate, result.n, result.discordant) == (4 / 7, 4 / 7, 7, 4)
    assert result.exact_delta == 0
    assert result.p_value == 1.0


def test_all_discordant_and_zero_discordance() -> None:
    flipped = paired_binary_counts(0, 12, 8, 0)
    assert flipped.exact_delta == Fraction(-4, 20)
    assert flipped.interval.low < -0.2 < flipped.interval.high
    still = paired_binary_counts(25, 0, 0, 5)
    assert still.delta == 0 and still.p_value == 1.0 and still.p_drop == 1.0
    # no case flipped, yet 30 cases cannot rule out a drop of several points
    assert -0.2 < still.interval.low < -0.05 and 0.05 < still.interval.high < 0.2


@settings(max_examples=300, deadline=None)
@given(st.tuples(*[st.integers(0, 60)] * 4).filter(lambda cells: sum(cells) > 0), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_the_interval_holds_the_estimate_within_bounds_and_mirrors(cells: tuple[int, int, int, int], confidence: float) -> None:
    both, regressed, fixed, neither = cells
    forward = newcombe_interval(both, regressed, fixed, neither, confidence)
    backward = newcombe_interval(both, fixed, regressed, neither, confidence)
    delta = (fixed - regressed) / sum(cells)
    assert -1.0 <= forward.low <= delta <= forward.high <= 1.0
    assert forward.width > 0  # never degenerate
    # swapping the runs mirrors the interval
    assert (backward.low, backward.high) == (pytest.approx(-forward.high, abs=1e-12), pytest.approx(-forward.low, abs=1e-12))
    wider = newcombe_interval(both, regressed, fixed, neither, min(0.999, confidence + 0.005))
    assert wider.low <= forward.low + 1e-12 and wider.high >= forward.high - 1e-12


def test_bad_input_names_its_culprit() -> None:
    with pytest.raises(StatisticsInputError, match="baseline and current must pair"):
        paired_binary([True], [True, False])
    with pytest.raises(StatisticsInputError, match="no paired cases"):
        paired_binary([], [])
    with pytest.raises(StatisticsInputError, match=r"current\[1\] is 'yes'"):
        paired_binary([True, True], [True, "yes"])
    with pytest.raises(StatisticsInputError, match=r"baseline\[0\] is 2"):
        paired_binary([2], [1])
    with pytest.raises(StatisticsInputError, match="every cell"):
        paired_binary_counts(0, 0, 0, 0)
    with pytest.raises(StatisticsInputError, match="confidence"):
        paired_binary([True], [False], confidence=1.0)
    with pytest.raises(StatisticsInputError, match="more than the 3 trials"):
        wilson_interval(4, 3)
