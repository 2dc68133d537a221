"""Student's paired t interval and test agree with scipy's ``ttest_rel``, and the t distribution
written in the standard library agrees with scipy's."""

from __future__ import annotations

import random

import pytest
from evalkit.stats import StatisticsInputError, paired_t
from evalkit.stats.distributions import normal_quantile, regularized_beta, student_t_cdf, student_t_quantile
from evalkit.stats.means import differences, paired_t_from_differences
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats


def scored_tables() -> list[tuple[list[float], list[float]]]:
    """Twenty-four paired tables: scores, pass fractions of 5 repeats, retrieval-like values."""
    rng = random.Random(20241)
    tables = []
    for size in (2, 3, 5, 8, 12, 20, 30, 50, 120, 400, 2000, 25):
        baseline = [rng.random() for _ in range(size)]
        current = [min(1.0, max(0.0, b + rng.gauss(-0.04, 0.2))) for b in baseline]
        tables.append((baseline, current))
        fractions = [rng.randrange(6) / 5 for _ in range(size)]
        tables.append((fractions, [min(1.0, max(0.0, f + rng.choice((-0.4, -0.2, 0, 0, 0.2)))) for f in fractions]))
    return tables


TABLES = scored_tables()


@pytest.mark.parametrize(("baseline", "current"), TABLES, ids=[f"n{len(b)}-{i}" for i, (b, _) in enumerate(TABLES)])
def test_paired_t_equals_scipy(baseline: list[float], current: list[float]) -> None:
    result = paired_t(baseline, current)
    reference = stats.ttest_rel(current, baseline)
    ci = reference.confidence_interval(0.95)
    assert result.delta == pytest.approx(sum(c - b for b, c in zip(baseline, current, strict=True)) / len(baseline))
    assert result.interval.low == pytest.approx(max(-1.0, ci.low), abs=1e-12)
    assert result.interval.high == pytest.approx(min(1.0, ci.high), abs=1e-12)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-15)
    assert result.p_drop == pytest.approx(stats.ttest_rel(current, baseline, alternative="less").pvalue, rel=1e-9, abs=1e-15)
    assert result.t == pytest.approx(reference.statistic, rel=1e-12)
    at_90 = paired_t(baseline, current, confidence=0.9).interval
    ci90 = reference.confidence_interval(0.9)
    assert (at_90.low, at_90.high) == (pytest.approx(max(-1, ci90.low), abs=1e-12), pytest.approx(min(1, ci90.high), abs=1e-12))


DEGREES = [0.5, 1, 2, 2.5, 3, 4, 5, 7, 10, 19, 29, 30, 49, 99, 199, 1999, 99_999]
LEVELS = [1e-12, 1e-6, 0.001, 0.01, 0.025, 0.05, 0.1, 0.3, 0.49, 0.5, 0.6, 0.9, 0.95, 0.975, 0.995, 0.999999]


@pytest.mark.parametrize("df", DEGREES)
def test_student_t_quantile_and_cdf_equal_scipy(df: float) -> None:
    for p in LEVELS:
        assert student_t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-10, abs=1e-12)
    for t in (-50.0, -5.0, -2.0, -1.0, -0.1, 0.0, 0.3, 1.7, 3.0, 10.0, 1000.0):
        assert student_t_cdf(t, df) == pytest.approx(stats.t.cdf(t, df), rel=1e-9, abs=1e-15)


def test_distribution_edges() -> None:
    assert student_t_cdf(float("-inf"), 3) == 0.0 and student_t_cdf(float("inf"), 3) == 1.0
    assert student_t_quantile(0.5, 7) == 0.0
    assert student_t_quantile(0.975, 1e12) == pytest.approx(normal_quantile(0.975))
    for a, b, x in [(0.5, 0.5, 0.3), (3, 7, 0.2), (50, 0.5, 0.99), (2, 3, 0.9), (200, 300, 0.4), (1e5, 0.5, 0.99999)]:
        assert regularized_beta(x, a, b) == pytest.approx(stats.beta.cdf(x, a, b), rel=1e-10, abs=1e-15)
    assert regularized_beta(0.0, 2, 3) == 0.0 and regularized_beta(1.0, 2, 3) == 1.0
    with pytest.raises(ValueError, match="0 < p < 1"):
        student_t_quantile(1.0, 3)
    with pytest.raises(ValueError, match="degrees of freedom"):
        student_t_cdf(0.0, 0)


def test_one_case_says_nothing_and_no_spread_is_a_point() -> None:
    one = paired_t([0.5], [0.2])
    assert (one.interval.low, one.interval.high, one.p_value, one.p_drop, one.sd, one.t) == (-1.0, 1.0, 1.0, 1.0, None, None)
    same = paired_t([0.4, 0.6, 0.9], [0.4, 0.6, 0.9])
    assert (same.interval.low, same.interval.high, same.p_value, same.p_drop) == (0.0, 0.0, 1.0, 1.0)
    shifted = paired_t([1.0, 1.0, 1.0], [0.5, 0.5, 0.5])
    assert (shifted.delta, shifted.interval.low, shifted.p_value, shifted.p_drop) == (-0.5, -0.5, 0.0, 0.0)
    better = paired_t([0.0, 0.0], [0.5, 0.5])
    assert better.p_drop == 1.0 and better.p_value == 0.0


def test_differences_only_leave_the_means_unknown() -> None:
    result = paired_t_from_differences([-0.1, 0.2, -0.3])
    assert result.baseline_mean is None and result.mean is None
    assert result.delta == pytest.approx(-0.2 / 3)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=60), st.sampled_from([0.8, 0.9, 0.95]))
def test_the_interval_holds_the_estimate_and_mirrors(pairs: list[tuple[float, float]], confidence: float) -> None:
    baseline = [b for b, _ in pairs]
    current = [c for _, c in pairs]
    forward = paired_t(baseline, current, confidence)
    backward = paired_t(current, baseline, confidence)
    assert -1.0 <= forward.interval.low <= forward.delta <= forward.interval.high <= 1.0
    assert backward.delta == pytest.approx(-forward.delta, abs=1e-12)
    assert backward.p_value == pytest.approx(forward.p_value, abs=1e-9)
    if -1 < forward.interval.low and forward.interval.high < 1:
        assert backward.interval.low == pytest.approx(-forward.interval.high, abs=1e-9)


def test_values_outside_zero_one_are_refused() -> None:
    with pytest.raises(StatisticsInputError, match=r"current\[2\] is 1.5, not a number in \[0, 1\]"):
        paired_t([0.1, 0.2, 0.3], [0.1, 0.2, 1.5])
    with pytest.raises(StatisticsInputError, match=r"baseline\[0\] is nan"):
        differences([float("nan")], [0.0])
    with pytest.raises(StatisticsInputError, match=r"baseline\[1\] is '0.5'"):
        paired_t([0.1, "0.5"], [0.1, 0.2])
    with pytest.raises(StatisticsInputError, match="differences are empty"):
        paired_t_from_differences([])


def test_paired_t_keeps_the_mean_of_each_side() -> None:
    result = paired_t([0.2, 0.4, 0.9], [0.5, 0.7, 0.3])
    assert result.baseline_mean == pytest.approx(0.5, abs=1e-15) and result.mean == pytest.approx(0.5, abs=1e-15)
    assert paired_t([0.0, 0.2], [1.0, 0.6]).baseline_mean == pytest.approx(0.1, abs=1e-15)
    assert paired_t([0.0, 0.2], [1.0, 0.6]).mean == pytest.approx(0.8, abs=1e-15)


def test_equal_differences_are_a_point_even_where_their_float_mean_is_not_exact() -> None:
    # fsum([-0.1] * 3) / 3 is -0.10000000000000002: the spread must not come from rounding
    result = paired_t_from_differences([-0.1, -0.1, -0.1])
    assert (result.delta, result.sd, result.t) == (-0.1, 0.0, None)
    assert (result.interval.low, result.interval.high, result.p_value, result.p_drop) == (-0.1, -0.1, 0.0, 0.0)


def test_differences_are_current_minus_baseline_and_an_interval_holds_its_ends() -> None:
    from evalkit.stats import Interval

    assert differences([0.25, 0.5], [0.75, 0.0]) == [0.5, -0.5]
    interval = Interval(0.25, 0.5, 0.95)
    assert 0.25 in interval and 0.5 in interval and 0.375 in interval
    assert 0.2499 not in interval and 0.5001 not in interval
