"""The standard-library distribution functions against scipy (and exact integer arithmetic) at
the precision their docstrings claim."""

from __future__ import annotations

import math
import re
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from evalkit.stats import distributions
from evalkit.stats.distributions import (
    _hill_start,
    _log_gamma_ratio,
    binomial_half_cdf,
    binomial_half_lower_sum,
    binomial_half_two_sided,
    normal_cdf,
    normal_quantile,
    regularized_beta,
    student_t_cdf,
    student_t_quantile,
)
from scipy import special, stats

# degrees of freedom of a paired t test (n - 1), fractional ones of Welch's, and the edges of
# Hill's start (1 and 2 have closed forms, below 3 it starts from the normal)
DEGREES = [0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 7, 12, 29, 99.5, 100, 101, 250, 1_000, 10_000]


def test_normal_quantile_and_cdf_are_scipys_normal() -> None:
    """The standard normal quantile and CDF agree with scipy to about 1e-15."""
    for p in (1e-300, 1e-12, 0.001, 0.025, 0.3, 0.5, 0.8, 0.975, 1 - 1e-12):
        assert normal_quantile(p) == pytest.approx(stats.norm.ppf(p), rel=1e-14, abs=1e-300)
    for z in (-4.0, -3.0, -1.959963984540054, -0.3, 0.0, 0.7, 3.0):
        assert normal_cdf(z) == pytest.approx(stats.norm.cdf(z), rel=1e-13)
    # statistics.NormalDist.cdf is 0.5 (1 + erf(z / sqrt 2)): below z = -5 it keeps its absolute
    # accuracy only (2 % relative at z = -8)
    assert normal_cdf(-8.0) == pytest.approx(stats.norm.cdf(-8.0), abs=1e-16)


@pytest.mark.parametrize("a", [0.5, 1.0, 2.5, 7.0, 30.0, 99.5, 100.0, 150.0, 400.0, 5_000.0, 1e6])
@pytest.mark.parametrize("b", [0.5, 1.0, 3.0, 40.0, 120.0, 1_000.0])
def test_regularized_beta_is_scipys_betainc(a: float, b: float) -> None:
    """I_x(a, b) to 1e-11 relative on both sides of the fraction's switch point (a+1)/(a+b+2),
    for small and large a and b (Stirling's series from a = 100 on)."""
    for x in (1e-6, 0.01, 0.2, 0.5, 0.8, 0.99, 0.999999):
        expected = special.betainc(a, b, x)
        if expected > 1e-290:
            assert regularized_beta(x, a, b) == pytest.approx(expected, rel=1e-11)


def test_regularized_beta_at_and_beyond_its_ends() -> None:
    """I_x is 0 for x <= 0 and 1 for x >= 1 (or a complement <= 0); a complement given exactly
    replaces 1 - x."""
    assert regularized_beta(0.0, 2.0, 3.0) == 0.0
    assert regularized_beta(-0.5, 2.0, 3.0) == 0.0
    assert regularized_beta(1.0, 2.0, 3.0) == 1.0
    assert regularized_beta(1.5, 2.0, 3.0) == 1.0
    assert regularized_beta(0.5, 2.0, 3.0, complement=0.0) == 1.0
    # x = 1 - 1e-20 is 1.0 in floats; its complement 1e-20 keeps the far tail: 1 - I = I_y(b, a)
    tail = 1.0 - regularized_beta(1.0 - 1e-20, 3.0, 0.5, complement=1e-20)
    assert tail == pytest.approx(special.betainc(0.5, 3.0, 1e-20), rel=1e-6)
    assert regularized_beta(0.25, 2.0, 3.0, complement=0.75) == pytest.approx(
        special.betainc(2.0, 3.0, 0.25), rel=1e-14
    )
    # the closed form I_x(1, 1) = x and I_x(a, 1) = x**a
    assert regularized_beta(0.3, 1.0, 1.0) == pytest.approx(0.3, rel=1e-15)
    assert regularized_beta(0.3, 4.0, 1.0) == pytest.approx(0.3**4, rel=1e-14)


@pytest.mark.parametrize("df", DEGREES)
def test_student_t_cdf_is_scipys(df: float) -> None:
    """P(T <= t) to 1e-12 relative, in both tails and the far lower tail."""
    for t in (-300.0, -40.0, -8.0, -3.0, -1.0, -0.1, 0.0, 0.5, 2.0, 6.0, 50.0):
        expected = stats.t.cdf(t, df)
        if expected > 1e-290:
            assert student_t_cdf(t, df) == pytest.approx(expected, rel=1e-12)


def test_student_t_cdf_edges_and_refusals() -> None:
    """Infinite t gives 0 and 1; a t of 0 gives one half; degrees of freedom must be positive."""
    assert student_t_cdf(-math.inf, 3.0) == 0.0
    assert student_t_cdf(math.inf, 3.0) == 1.0
    assert student_t_cdf(0.0, 3.0) == 0.5
    assert student_t_cdf(-0.0, 7.0) == 0.5
    # t just above 0 is read through the mirror 1 - P(T <= -t): a hair above one half
    assert 0.5 < student_t_cdf(1e-9, 4.0) == pytest.approx(stats.t.cdf(1e-9, 4.0), rel=1e-15)
    for df in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match=rf"^degrees of freedom must be positive, got {re.escape(repr(df))}$"):
            student_t_cdf(1.0, df)
    # the smallest positive df is accepted
    assert student_t_cdf(-1.0, 1e-3) == pytest.approx(stats.t.cdf(-1.0, 1e-3), rel=1e-10)


@pytest.mark.parametrize("df", DEGREES)
def test_student_t_quantile_is_scipys_ppf(df: float) -> None:
    """The quantile agrees with scipy's t.ppf to 1e-12 relative, from the far tails to the middle,
    and inverts the CDF."""
    for p in (1e-15, 1e-9, 1e-4, 0.001, 0.025, 0.1, 0.3, 0.49, 0.6, 0.975, 0.9999, 1 - 1e-9):
        expected = stats.t.ppf(p, df)
        ours = student_t_quantile(p, df)
        assert ours == pytest.approx(expected, rel=1e-12)


def test_student_t_quantile_edges_and_refusals() -> None:
    """p = 1/2 is 0; infinite (or beyond 1e10) degrees of freedom are the normal quantile; p must
    lie strictly between 0 and 1 and df be positive."""
    for df in (0.5, 1.0, 3.0, 7.0, 30.0, 1_000.0, 1e12, math.inf):  # +0.0, not -0.0
        assert math.copysign(1.0, student_t_quantile(0.5, df)) == 1.0 and student_t_quantile(0.5, df) == 0.0
    assert student_t_quantile(0.025, math.inf) == pytest.approx(stats.norm.ppf(0.025), rel=1e-15)
    assert student_t_quantile(0.975, math.inf) == pytest.approx(stats.norm.ppf(0.975), rel=1e-15)
    assert student_t_quantile(0.1, 2e10) == pytest.approx(stats.norm.ppf(0.1), rel=1e-15)
    assert student_t_quantile(0.9, 2e10) == pytest.approx(stats.norm.ppf(0.9), rel=1e-15)
    for p in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=rf"^a quantile needs 0 < p < 1, got {re.escape(repr(p))}$"):
            student_t_quantile(p, 3.0)
    for df in (0.0, -2.0, math.nan):
        with pytest.raises(ValueError, match=rf"^degrees of freedom must be positive, got {re.escape(repr(df))}$"):
            student_t_quantile(0.3, df)


# Hill's start against scipy's quantile at P = (1e-12, 1e-8, 1e-5, 1e-3, 0.01, 0.025, 0.05, 0.1, 0.2,
# 0.3, 0.4, 0.49): the relative accuracy the approximation reaches there (twice its error against
# scipy, rounded up to 1 or 3 times a power of ten; at least 1e-14)
HILL_P = (1e-12, 1e-8, 1e-5, 1e-3, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.49)
HILL_ACCURACY = {
    3: (3e-8, 3e-8, 3e-8, 3e-8, 3e-7, 3e-6, 3e-5, 3e-6, 1e-6, 3e-8, 3e-7, 1e-6),
    3.5: (1e-7, 1e-7, 1e-7, 1e-7, 1e-6, 1e-5, 1e-6, 3e-6, 1e-6, 3e-7, 3e-7, 1e-6),
    4: (1e-8, 1e-8, 1e-8, 3e-8, 1e-5, 1e-7, 3e-7, 3e-7, 3e-7, 3e-8, 1e-7, 1e-7),
    4.5: (1e-8, 1e-8, 1e-8, 3e-7, 3e-5, 1e-8, 3e-8, 1e-7, 3e-8, 1e-7, 1e-7, 1e-7),
    5: (1e-8, 1e-8, 1e-8, 1e-6, 3e-8, 3e-7, 1e-7, 3e-8, 1e-8, 1e-7, 1e-7, 3e-8),
    6: (1e-9, 1e-9, 1e-8, 1e-5, 1e-7, 1e-7, 1e-7, 3e-8, 1e-8, 3e-8, 3e-8, 1e-8),
    8: (1e-10, 3e-10, 3e-7, 1e-7, 3e-8, 3e-8, 1e-8, 3e-9, 3e-10, 1e-9, 3e-9, 1e-10),
    12: (3e-10, 1e-7, 1e-7, 3e-8, 1e-8, 3e-9, 3e-9, 3e-10, 1e-10, 3e-11, 1e-10, 1e-10),
    30: (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 3e-11, 3e-11, 1e-11, 1e-12, 1e-12, 1e-12, 1e-12),
    100: (3e-9, 3e-10, 3e-11, 3e-12, 3e-13, 1e-13, 3e-14, 1e-14, 1e-14, 1e-14, 1e-14, 1e-14),
    1000: (1e-14, 1e-14, 1e-14, 1e-14, 1e-14, 1e-14, 1e-14, 1e-14, 1e-14, 1e-14, 1e-14, 1e-14),
}


@pytest.mark.parametrize("df", list(HILL_ACCURACY))
def test_hills_start_keeps_its_accuracy(df: float) -> None:
    """Hill's Algorithm 396 (the Newton iteration's start) approximates |t| with
    P(|T| > |t|) = two_tailed to within 3e-5 relative from 3 degrees of freedom, and far better in
    most places: the table holds it there, in the tail branch (small p) and the normal-expansion
    branch (with its correction below 5 degrees of freedom) alike — a wrong coefficient shows."""
    for p, within in zip(HILL_P, HILL_ACCURACY[df], strict=True):
        assert _hill_start(2 * p, df) == pytest.approx(-stats.t.ppf(p, df), rel=within)


def test_hills_start_is_exact_for_one_and_two_degrees_of_freedom() -> None:
    """For 1 and 2 degrees of freedom the quantile has a closed form (Cauchy; 2 / (p (2 - p)) - 2)."""
    for p in (1e-3, 0.05, 0.2, 0.45):
        assert _hill_start(2 * p, 1) == pytest.approx(-stats.t.ppf(p, 1), rel=1e-12)
        assert _hill_start(2 * p, 2) == pytest.approx(-stats.t.ppf(p, 2), rel=1e-12)
    # between 2 and 3 the start is the normal quantile's size
    assert _hill_start(0.05, 2.5) == pytest.approx(stats.norm.isf(0.025), rel=1e-15)


def exact_lower(n: int, k: int) -> Fraction:
    """P(X <= k) for X ~ Binomial(n, 1/2), exactly (comb(n, i + 1) = comb(n, i) (n - i) / (i + 1),
    an exact integer at every step)."""
    total = term = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    assert term == math.comb(n, k)
    return Fraction(total, 2**n)


@pytest.mark.parametrize(("n", "k"), [(0, 0), (1, 0), (5, 2), (10, 3), (30, 29), (40, 12), (200, 100), (200, 101)])
def test_binomial_lower_sum_is_the_sum_of_binomial_coefficients(n: int, k: int) -> None:
    """The integer sum of comb(n, i) for i = 0..k, with the ends: nothing below 0, 2**n from n on."""
    assert binomial_half_lower_sum(n, k) == sum(math.comb(n, i) for i in range(k + 1))
    assert binomial_half_lower_sum(n, -1) == 0
    assert binomial_half_lower_sum(n, n) == binomial_half_lower_sum(n, n + 3) == 2**n


@pytest.mark.parametrize(
    ("n", "k"),
    [(1, 0), (2, 1), (3, 1), (3, 2), (10, 2), (10, 5), (10, 7), (25, 12), (25, 13), (400, 170), (2_048, 980),
     (2_049, 980), (2_049, 1_024), (2_049, 1_025), (3_001, 1_400), (3_001, 1_600), (6_000, 2_860), (6_000, 3_000),
     (6_000, 3_140), (12_345, 6_000), (12_345, 5_900), (3_001, 0), (3_001, 1), (3_001, 3), (5_000, 20),
     (5_000, 4_996), (5_000, 4_999)],
)  # fmt: skip
def test_binomial_half_cdf_is_correctly_rounded(n: int, k: int) -> None:
    """P(X <= k) equals the exact fraction rounded to the nearest float, below and above the middle
    and on either side of 2,048 trials (summed exactly up to there, bracketed beyond)."""
    assert binomial_half_cdf(n, k) == float(exact_lower(n, k))


@pytest.mark.parametrize(
    ("n", "k"),
    [(1, 0), (3, 1), (10, 2), (25, 12), (400, 170), (2_048, 980), (2_049, 980), (2_049, 1_024), (3_001, 1_400),
     (6_000, 2_860), (6_000, 2_999), (12_345, 6_000), (3_001, 0), (3_001, 2), (5_000, 20)],
)  # fmt: skip
def test_binomial_half_two_sided_is_twice_the_lower_tail_correctly_rounded(n: int, k: int) -> None:
    """min(1, 2 P(X <= k)) for k below n / 2, correctly rounded."""
    assert binomial_half_two_sided(n, k) == float(min(1, 2 * exact_lower(n, k)))


def test_binomial_edges() -> None:
    """Below 0 the tail is empty, from n on it is everything; from k = n / 2 on the two-sided
    p-value is 1."""
    assert binomial_half_cdf(5, -1) == 0.0
    assert binomial_half_cdf(5, 5) == binomial_half_cdf(5, 9) == 1.0
    assert binomial_half_cdf(0, 0) == 1.0
    assert binomial_half_cdf(4, 0) == 1 / 16 and binomial_half_cdf(4, 3) == 15 / 16
    assert binomial_half_two_sided(4, 2) == binomial_half_two_sided(5, 3) == 1.0
    assert binomial_half_two_sided(5, 2) == 1.0  # 2 * (1 + 5 + 10) / 32
    assert binomial_half_two_sided(4, 1) == 10 / 16  # 2 * (1 + 4) / 16
    assert binomial_half_two_sided(0, 0) == 1.0


@pytest.mark.parametrize(("n", "k"), [(100_000, 49_000), (100_000, 49_700), (100_000, 50_400), (60_001, 29_000)])
def test_binomial_tails_of_many_trials_agree_with_scipy(n: int, k: int) -> None:
    """100,000 trials: the bracketed sum agrees with scipy's binomial CDF (and its two-sided p)."""
    assert binomial_half_cdf(n, k) == pytest.approx(stats.binom.cdf(k, n, 0.5), rel=1e-12)
    if 2 * k < n:
        assert binomial_half_two_sided(n, k) == pytest.approx(2 * stats.binom.cdf(k, n, 0.5), rel=1e-12)


@pytest.mark.parametrize(
    ("n", "k"),
    [(2_049, 1_000), (3_001, 0), (3_001, 3), (3_001, 1_400), (6_000, 2_860), (6_000, 3_000), (12_345, 6_000),
     (100_000, 49_000), (100_000, 50_400)],
)  # fmt: skip
def test_beyond_2048_trials_the_bracket_decides_without_the_exact_sum(
    n: int, k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Milliseconds for 100,000 trials: the bracketed sum of about 6.5 sqrt(n) terms rounds to one
    float at both ends, so the exact sum of up to n / 2 terms is never taken — and the value is
    still the correctly rounded one."""
    low = min(k, n - k - 1)
    if n < 20_000:  # the exact fraction, rounded
        expected, two_sided = float(exact_lower(n, k)), float(min(1, 2 * exact_lower(n, low)))
    else:  # its sum would take seconds here: scipy's value
        expected = pytest.approx(stats.binom.cdf(k, n, 0.5), rel=1e-12)
        two_sided = pytest.approx(2 * stats.binom.cdf(low, n, 0.5), rel=1e-12)

    def refuse(n: int, k: int) -> int:
        raise AssertionError(f"the exact sum of {k + 1} terms was taken")

    monkeypatch.setattr(distributions, "binomial_half_lower_sum", refuse)
    assert binomial_half_cdf(n, k) == expected
    assert binomial_half_two_sided(n, low) == two_sided


def test_a_non_finite_hill_start_is_replaced_by_a_finite_one() -> None:
    """For 2 degrees of freedom and a subnormal p, Hill's closed form overflows to inf; the quantile
    starts from the normal one instead and stays finite and far in the lower tail. (Its value is
    not scipy's -1e155 here: t * t overflows beyond 1.34e154, so the CDF reads 0 past that.)"""
    assert _hill_start(1e-310, 2) == math.inf
    t = student_t_quantile(5e-311, 2)
    assert math.isfinite(t) and t < -1e150


def test_beyond_ten_billion_degrees_of_freedom_the_quantile_is_scipys() -> None:
    """Just above 1e10 degrees of freedom the quantile is the normal one, which is scipy's t
    quantile there to 1e-9 relative."""
    for p in (0.001, 0.1, 0.9):
        expected = stats.t.ppf(p, 1.00000000005e10)
        assert student_t_quantile(p, 1.00000000005e10) == pytest.approx(expected, rel=1e-9)


def _exact_log_gamma_ratio(a: float, b: int) -> float:
    """lgamma(a + b) - lgamma(a) for a whole b: the sum of log(a + i), i < b, in 40 digits."""
    with localcontext() as context:
        context.prec = 40
        return float(sum((Decimal(a) + i).ln() for i in range(b)))


@pytest.mark.parametrize("a", [100.0, 100.5])
@pytest.mark.parametrize("b", [1, 2, 3, 5, 10])
def test_log_gamma_ratio_from_a_hundred_is_stirlings_series_to_the_last_bits(a: float, b: int) -> None:
    """From a = 100 on, lgamma(a + b) - lgamma(a) is Stirling's series subtracted term by term,
    within 2 ulp of the exact value: the difference of two lgammas near 360 would lose about
    4e-15 of it, and a wrong sign or coefficient of the series' 1/x**3 or 1/x**5 term shows from
    5e-16 on."""
    assert _log_gamma_ratio(a, b) == pytest.approx(_exact_log_gamma_ratio(a, b), rel=4e-16, abs=0)


def test_regularized_beta_uses_the_direct_fraction_up_to_its_switch_point() -> None:
    """Below x = (a + 1) / (a + b + 2) the fraction of I_x itself is summed, not 1 - I_y(b, a):
    for a tiny b that side of the switch is a small value the complement would compute as a
    difference near 1 (30 and 0.01: 1e-14 relative instead of 1e-11)."""
    for x in (0.94, 0.95, 0.96):  # the switch is at 31 / 32.01 = 0.968
        assert regularized_beta(x, 30.0, 0.01) == pytest.approx(special.betainc(30.0, 0.01, x), rel=1e-13, abs=0)


def test_a_fraction_that_does_not_converge_is_refused_with_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """The continued fraction gives up after 99,999 steps with an ArithmeticError naming x, a and b
    (no step can come within a negative tolerance of 1)."""
    monkeypatch.setattr(distributions, "_EPSILON", -1.0)
    message = "the incomplete beta fraction did not converge (x=0.3, a=2.0, b=3.0)"
    with pytest.raises(ArithmeticError, match=f"^{re.escape(message)}$"):
        regularized_beta(0.3, 2.0, 3.0)


# (df, p) where Hill's start is within a Newton step or two of the quantile: at most 5 evaluations
# of the CDF (the bracket's and the Newton steps') find it to 1e-14
FEW_STEPS = {
    3: (1e-12, 1e-09, 1e-06, 0.0001, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.9, 0.95, 0.975, 0.99, 0.999),
    3.5: (1e-12, 1e-09, 1e-06, 0.0001, 0.001, 0.05, 0.1, 0.2, 0.3, 0.7, 0.9, 0.95, 0.975, 0.99, 0.999),
    4: (1e-12, 1e-09, 1e-06, 0.0001, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.7, 0.9, 0.95, 0.975, 0.99, 0.999),
    5: (1e-12, 1e-06, 0.0001, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.7, 0.9, 0.95, 0.975, 0.99, 0.999),
    7: (1e-09, 1e-06, 0.0001, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.9, 0.95, 0.975, 0.99, 0.999),
    12: (1e-12, 1e-09, 1e-06, 0.0001, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.7, 0.9, 0.95, 0.975, 0.999),
    29: (1e-06, 0.001, 0.01, 0.025, 0.05, 0.1, 0.3, 0.7, 0.9, 0.95, 0.975, 0.99),
    100: (0.0001, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.7, 0.9, 0.95, 0.975, 0.99, 0.999),
    101: (1e-09, 0.0001, 0.001, 0.025, 0.05, 0.1, 0.2, 0.3, 0.7, 0.9, 0.95, 0.975),
    1000: (1e-12, 1e-09, 1e-06, 0.0001, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.95, 0.975, 0.99, 0.999),
    10_000: (1e-12, 1e-09, 1e-06, 0.0001, 0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.7, 0.9, 0.95, 0.99, 0.999),
}


@pytest.mark.parametrize("df", list(FEW_STEPS))
def test_the_quantile_needs_few_cdf_evaluations_from_hills_start(df: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hill's start, Newton steps with the t density as the slope and the stop at 1e-14 relative
    find the usual quantiles in at most 5 evaluations of the CDF: a worse start, a wrong density
    or step, or a stop that is never met costs tens of them (and the value is still scipy's)."""
    evaluations = 0
    lower_tail = distributions._t_lower_tail

    def counted(t: float, df: float) -> float:
        nonlocal evaluations
        evaluations += 1
        return lower_tail(t, df)

    monkeypatch.setattr(distributions, "_t_lower_tail", counted)
    for p in FEW_STEPS[df]:
        evaluations = 0
        assert student_t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-12, abs=0)
        assert evaluations <= 5, (p, evaluations)


def test_the_quantile_far_in_the_tail_where_the_density_underflows() -> None:
    """At p = 1e-300 with 2 degrees of freedom the quantile is near -7e149, where the t density
    underflows to 0: the step falls back to bisection instead of dividing by zero."""
    assert distributions._t_density(-7e149, 2.0) == 0.0
    assert student_t_quantile(1e-300, 2.0) == pytest.approx(stats.t.ppf(1e-300, 2.0), rel=1e-12, abs=0)


@pytest.mark.parametrize(("n", "k"), [(2_049, 1_000), (2_049, 1_023), (2_100, 600), (2_100, 1_049), (3_001, 1),
                                      (3_001, 3), (3_001, 1_499), (4_097, 2_047), (6_000, 2_860), (6_000, 2_999)])  # fmt: skip
def test_tail_bounds_bracket_the_exact_sum(n: int, k: int) -> None:
    """Beyond 2,048 trials the fixed-point bracket holds the exact tail (the walk's floors below, its
    ceilings and the geometric bound of the terms left out above) and is narrower than 2**-64 of
    it."""
    low, high, denominator = distributions._tail_bounds(n, k)
    exact = binomial_half_lower_sum(n, k) << distributions._GUARD_BITS
    assert denominator == 1 << (n + distributions._GUARD_BITS)
    assert low <= exact <= high
    assert (high - low) << 64 <= high


@pytest.mark.parametrize(("n", "k"), [(3_001, 3), (3_001, 1_400), (6_000, 2_860), (6_000, 3_140), (2_049, 1_024)])
def test_a_bracket_that_rounds_two_ways_falls_back_to_the_exact_sum(
    n: int, k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the bracket's ends round to different floats (widened here, as a value within 2**-64 of
    a rounding boundary would make it), the exact integer sum decides: still correctly rounded."""
    bounds = distributions._tail_bounds

    def wide(n: int, k: int) -> tuple[int, int, int]:
        low, high, denominator = bounds(n, k)
        return max(0, low - (denominator >> 20)), high + (denominator >> 20), denominator

    monkeypatch.setattr(distributions, "_tail_bounds", wide)
    assert binomial_half_cdf(n, k) == float(exact_lower(n, k))
    low = min(k, n - k - 1)
    assert binomial_half_two_sided(n, low) == float(min(1, 2 * exact_lower(n, low)))


@pytest.mark.parametrize("df", [2e4, 1e5, 1e6, 1e8, 1e10, 1e12])
def test_student_t_cdf_keeps_its_precision_with_many_degrees_of_freedom(df: float) -> None:
    """From 19,999 degrees of freedom on the incomplete beta's fraction is summed in decimals:
    in floats its steps cancel to about df ulp (x = df / (df + t**2) within t**2 / df of 1), 2e-12
    wrong at 1e5 degrees of freedom, 3e-7 at 1e10 and 8e-6 at 1e12; now 3e-14 as elsewhere."""
    for t in (-300.0, -40.0, -8.0, -3.0, -1.8, -1.0, -0.1, 0.5, 2.0, 6.0, 50.0):
        expected = stats.t.cdf(t, df)
        if expected > 1e-290:
            assert student_t_cdf(t, df) == pytest.approx(expected, rel=3e-14, abs=0)
    for p in (1e-9, 0.001, 0.025, 0.3, 0.975):
        assert student_t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-12 if df <= 1e10 else 1e-10, abs=0)


def test_the_fraction_is_summed_in_decimals_from_a_plus_b_of_ten_thousand() -> None:
    """19,999 degrees of freedom are a + b = 9,999.5 + 0.5 = 10,000 exactly, the first sum the
    fraction takes in decimals: within 2e-15 of scipy where floats are 1e-13 off; up to 10,000
    degrees of freedom floats keep about 3e-13."""
    for t in (-2.0, -4.0):
        assert student_t_cdf(t, 19_999.0) == pytest.approx(stats.t.cdf(t, 19_999.0), rel=1e-14, abs=0)
    # the quantile's Newton steps on it reach 1e10 degrees of freedom, where the normal one is
    # still 3e-10 off
    for p in (0.001, 0.025):
        assert student_t_quantile(p, 1e10) == pytest.approx(stats.t.ppf(p, 1e10), rel=1e-12, abs=0)
    # just beyond 1e10 it is the normal quantile itself (the t quantile is 1e-10 from it there)
    for p in (0.001, 0.025):
        assert student_t_quantile(p, 1.00000000005e10) == normal_quantile(p)
    assert student_t_quantile(0.9, 1.00000000005e10) == -normal_quantile(1.0 - 0.9)
