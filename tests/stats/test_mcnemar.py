"""The exact McNemar test agrees with scipy's binomial test and statsmodels' McNemar, and keeps the
value verdict.py always gave."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from evalkit.stats import StatisticsInputError, distributions, mcnemar_drop_p, mcnemar_exact_p
from evalkit.stats.distributions import binomial_half_cdf, binomial_half_lower_sum, binomial_half_two_sided
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar

# (regressed, fixed): none flipped, one way only, balanced, lopsided, large
TABLES = [
    (0, 0), (1, 0), (0, 1), (5, 0), (0, 5), (6, 0), (0, 6), (5, 1), (1, 5), (2, 3),
    (3, 7), (7, 3), (10, 10), (12, 2), (2, 12), (1, 30), (30, 1), (16, 6), (25, 25), (0, 40),
    (40, 0), (31, 19), (100, 80), (80, 100), (500, 430), (1000, 1100), (3000, 2800), (2100, 0),
]


def verdict_formula(regressed: int, fixed: int) -> float:
    """The formula verdict.py computed before evalkit.stats existed, verbatim."""
    n = regressed + fixed
    if n == 0:
        return 1.0
    k = min(regressed, fixed)
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, float(Fraction(2 * tail, 2**n)))


@pytest.mark.parametrize(("regressed", "fixed"), TABLES)
def test_two_sided_p_equals_scipy_and_statsmodels(regressed: int, fixed: int) -> None:
    p = mcnemar_exact_p(regressed, fixed)
    table = [[10, regressed], [fixed, 7]]  # concordant cells do not matter
    assert p == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-9, abs=0)
    if regressed + fixed:
        assert p == pytest.approx(binomtest(regressed, regressed + fixed, 0.5).pvalue, rel=1e-9, abs=0)
    else:
        assert p == 1.0  # nothing flipped: no evidence (scipy refuses n = 0)


@pytest.mark.parametrize(("regressed", "fixed"), TABLES)
def test_one_sided_p_equals_scipy(regressed: int, fixed: int) -> None:
    p = mcnemar_drop_p(regressed, fixed)
    if regressed + fixed:
        expected = binomtest(regressed, regressed + fixed, 0.5, alternative="greater").pvalue
        assert p == pytest.approx(expected, rel=1e-9, abs=1e-300)
    else:
        assert p == 1.0


@pytest.mark.parametrize(("regressed", "fixed"), [t for t in TABLES if t[0] + t[1] < 600])
def test_the_value_verdict_py_gave_is_kept_to_the_last_bit(regressed: int, fixed: int) -> None:
    assert mcnemar_exact_p(regressed, fixed) == verdict_formula(regressed, fixed)


def test_verdict_imports_the_one_implementation() -> None:
    from evalkit import verdict

    assert verdict.mcnemar_exact_p is mcnemar_exact_p


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400))
def test_the_bracketed_sum_rounds_like_exact_arithmetic(regressed: int, fixed: int) -> None:
    """Above 2,048 trials the tail is bracketed in fixed point; forced onto small tables here, it
    must still give the correctly rounded value."""
    saved = distributions._EXACT_TRIALS
    distributions._EXACT_TRIALS = 0
    try:
        n = regressed + fixed
        assert mcnemar_exact_p(regressed, fixed) == verdict_formula(regressed, fixed)
        exact_cdf = float(Fraction(binomial_half_lower_sum(n, fixed), 2**n))
        assert mcnemar_drop_p(regressed, fixed) == exact_cdf
    finally:
        distributions._EXACT_TRIALS = saved


def test_large_tables_keep_exact_rounding() -> None:
    """Above 2,048 flipped cases (the bracketed path), against the exact sum of the terms."""
    for regressed, fixed in [(1100, 1000), (1500, 1600), (1000, 1400)]:
        n, k = regressed + fixed, min(regressed, fixed)
        term = tail = 1
        for i in range(k):
            term = term * (n - i) // (i + 1)
            tail += term
        assert mcnemar_exact_p(regressed, fixed) == min(1.0, 2 * tail / 2**n)


def test_binomial_tails_at_the_edges() -> None:
    assert binomial_half_cdf(10, -1) == 0.0
    assert binomial_half_cdf(10, 10) == 1.0
    assert binomial_half_cdf(4, 2) == 11 / 16
    assert binomial_half_two_sided(4, 2) == 1.0
    assert binomial_half_lower_sum(5, 7) == 32
    assert binomial_half_lower_sum(5, -1) == 0


def test_one_flip_each_way_is_not_evidence_and_five_regressions_are() -> None:
    assert mcnemar_drop_p(1, 0) == 0.5
    assert mcnemar_drop_p(4, 0) == 1 / 16
    assert mcnemar_drop_p(5, 0) == 1 / 32
    assert mcnemar_drop_p(0, 5) == 1.0


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3", None])
def test_counts_must_be_whole_numbers(bad: object) -> None:
    with pytest.raises(StatisticsInputError, match="regressed"):
        mcnemar_exact_p(bad, 1)  # type: ignore[arg-type]
    with pytest.raises(StatisticsInputError, match="fixed"):
        mcnemar_drop_p(1, bad)  # type: ignore[arg-type]
