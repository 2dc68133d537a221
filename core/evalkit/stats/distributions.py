"""The few distribution functions the verdict statistics need, in the standard library only.

* The normal distribution is :class:`statistics.NormalDist` (its ``inv_cdf`` is Wichura's AS 241,
  accurate to about 1e-16).
* Student's t: the CDF through the regularized incomplete beta function (Abramowitz & Stegun
  26.7.1 with 26.5.27), which is evaluated by its continued fraction (A&S 26.5.8) with the modified
  Lentz method (Thompson & Barnett, J. Comput. Phys. 64, 1986); the quantile starts from Hill's
  approximation (G. W. Hill, "Algorithm 396: Student's t-quantiles", Comm. ACM 13(10), 1970) and
  is polished by safeguarded Newton steps on that CDF, so it agrees with scipy's ``t.ppf`` to
  about 1e-12 relative.
* Binomial tails at one half, exactly (integers), for McNemar's test and the sign test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, localcontext
from functools import lru_cache
from statistics import NormalDist
from typing import TypeVar

__all__ = [
    "binomial_half_cdf",
    "binomial_half_lower_sum",
    "binomial_half_two_sided",
    "normal_cdf",
    "normal_quantile",
    "regularized_beta",
    "student_t_cdf",
    "student_t_quantile",
]

_STANDARD_NORMAL = NormalDist()
_EPSILON = 1e-15
_TINY = 1e-300
#: From this a + b on the incomplete beta's continued fraction is summed in decimals of
#: _DECIMAL_DIGITS digits (see :func:`_fraction`).
_DECIMAL_FROM = 10_000
_DECIMAL_DIGITS = 60
_Real = TypeVar("_Real", float, Decimal)


def normal_quantile(p: float) -> float:
    """The standard normal quantile: ``z`` with ``P(Z <= z) = p``, for ``0 < p < 1``."""
    return _STANDARD_NORMAL.inv_cdf(p)


def normal_cdf(z: float) -> float:
    """The standard normal CDF ``P(Z <= z)``."""
    return _STANDARD_NORMAL.cdf(z)


def _log_gamma_ratio(a: float, b: float) -> float:
    """``lgamma(a + b) - lgamma(a)`` without the cancellation of two huge logarithms when ``a`` is
    large: Stirling's series for both, subtracted term by term (A&S 6.1.41)."""
    if a < 100:
        return math.lgamma(a + b) - math.lgamma(a)

    def correction(x: float) -> float:
        x2 = x * x
        return (1 / 12 - (1 / 360 - 1 / (1260 * x2)) / x2) / x

    return (a - 0.5) * math.log1p(b / a) + b * math.log(a + b) - b + correction(a + b) - correction(a)


def _log_beta(a: float, b: float) -> float:
    if a < b:
        a, b = b, a
    return math.lgamma(b) - _log_gamma_ratio(a, b)


def _beta_continued_fraction(x: _Real, a: _Real, b: _Real) -> _Real:
    """The continued fraction of I_x(a, b) (A&S 26.5.8), by the modified Lentz method; it
    converges fast for ``x < (a + 1) / (a + b + 2)``. In floats, or in decimals (the same steps:
    no float constant enters them)."""
    c = 1
    d = 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, 100_000):
        # even step: m (b - m) x / ((a + 2m - 1)(a + 2m))
        numerator = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1 + numerator * d
        d = 1 / (d if abs(d) > _TINY else _TINY)
        c = 1 + numerator / c
        c = c if abs(c) > _TINY else _TINY
        result *= d * c
        # odd step: -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
        numerator = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1 + numerator * d
        d = 1 / (d if abs(d) > _TINY else _TINY)
        c = 1 + numerator / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        result *= delta
        if abs(delta - 1) < _EPSILON:
            return result
    raise ArithmeticError(f"the incomplete beta fraction did not converge (x={x}, a={a}, b={b})")  # pragma: no cover


def regularized_beta(x: float, a: float, b: float, *, complement: float | None = None) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` for ``a, b > 0``.

    ``complement`` may give ``1 - x`` computed without cancellation (the t CDF knows it exactly).
    """
    y = 1.0 - x if complement is None else complement
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    # log1p of the smaller side: x close to 1 is common (the t CDF with many degrees of freedom)
    log_x = math.log1p(-y) if y < 0.5 else math.log(x)
    log_y = math.log1p(-x) if x < 0.5 else math.log(y)
    log_front = a * log_x + b * log_y - _log_beta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _fraction(x, y, a, b) / a
    return 1.0 - math.exp(log_front) * _fraction(y, x, b, a) / b


def _fraction(x: float, y: float, a: float, b: float) -> float:
    """The continued fraction of I_x(a, b), with ``y = 1 - x``. From ``a + b = 10,000`` on its
    Lentz steps ``1 + α d`` cancel to about ``a + b`` ulp in floats (x within about ``1 / a`` of 1
    in the t CDF with many degrees of freedom: 1e-5 wrong from 1e12), so it is summed in decimals
    of 60 digits there, from x read off the more accurate of ``x`` and ``1 - y``."""
    if a + b < _DECIMAL_FROM:
        return _beta_continued_fraction(x, a, b)
    with localcontext() as context:
        context.prec = _DECIMAL_DIGITS
        exact_x = 1 - Decimal(y) if y < x else Decimal(x)
        return float(_beta_continued_fraction(exact_x, Decimal(a), Decimal(b)))


def _t_lower_tail(t: float, df: float) -> float:
    """``P(T <= t)`` for ``t <= 0`` (no cancellation in the far tail)."""
    t2 = t * t
    return 0.5 * regularized_beta(df / (df + t2), df / 2.0, 0.5, complement=t2 / (df + t2))


def student_t_cdf(t: float, df: float) -> float:
    """Student's t CDF ``P(T <= t)`` with ``df > 0`` degrees of freedom."""
    if df <= 0 or math.isnan(df):
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    if math.isinf(t):
        return 0.0 if t < 0 else 1.0
    if t <= 0:
        return _t_lower_tail(t, df)
    return 1.0 - _t_lower_tail(-t, df)


def _t_density(t: float, df: float) -> float:
    log_density = (
        math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi) - (df + 1) / 2 * math.log1p(t * t / df)
    )
    return math.exp(log_density)


def _hill_start(two_tailed: float, df: float) -> float:
    """Hill's (1970) approximation of ``|t|`` with ``P(|T| > |t|) = two_tailed`` (Algorithm 396)."""
    if df == 1:
        return math.tan(math.pi * (1 - two_tailed) / 2)
    if df == 2:
        return math.sqrt(2 / (two_tailed * (2 - two_tailed)) - 2)
    if df < 3:  # outside the range the approximation was built for: start from the normal
        return -normal_quantile(0.5 * two_tailed)
    a = 1 / (df - 0.5)
    b = 48 / (a * a)
    c = ((20700 * a / b - 98) * a - 16) * a + 96.36
    d = ((94.5 / (b + c) - 3) / b + 1) * math.sqrt(a * math.pi / 2) * df
    y = (d * two_tailed) ** (2 / df)
    if y > 0.05 + a:
        x = normal_quantile(0.5 * two_tailed)
        y = x * x
        if df < 5:
            c += 0.3 * (df - 4.5) * (x + 0.6)
        c = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c
        y = (((((0.4 * y + 6.3) * y + 36) * y + 94.5) / c - y - 3) / b + 1) * x
        y = math.expm1(a * y * y)
    else:
        y = ((1 / (((df + 6) / (df * y) - 0.089 * d - 0.822) * (df + 2) * 3) + 0.5 / (df + 4)) * y - 1) * (df + 1) / (
            df + 2
        ) + 1 / y
    return math.sqrt(df * y)


def student_t_quantile(p: float, df: float) -> float:
    """Student's t quantile: ``t`` with ``P(T <= t) = p``, for ``0 < p < 1`` and ``df > 0``.

    Hill's approximation gives the start; Newton steps on the lower tail, kept inside a bracket
    that bisection falls back to, make it exact to about 1e-12 relative.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1, got {p!r}")
    if df <= 0 or math.isnan(df):
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    if p == 0.5:
        return 0.0
    tail = min(p, 1.0 - p)  # solve P(T <= t) = tail for t < 0, then mirror
    if math.isinf(df) or df > 1e10:
        t = normal_quantile(tail)
        return t if p < 0.5 else -t
    t = -_hill_start(2.0 * tail, df)
    if not math.isfinite(t) or t >= 0:
        t = normal_quantile(tail)
    # bracket [low, high] with F(low) <= tail <= F(high); high starts at 0 (F = 1/2)
    low, high = t, 0.0
    while _t_lower_tail(low, df) > tail:
        high, low = low, low * 2.0 - 1.0
    for _ in range(100):
        error = _t_lower_tail(t, df) - tail
        if error > 0:
            high = min(high, t)
        else:
            low = max(low, t)
        density = _t_density(t, df)
        step = error / density if density > 0 else math.inf
        candidate = t - step
        if not low < candidate < high:
            candidate = (low + high) / 2.0
        if abs(candidate - t) <= 1e-14 * max(1.0, abs(t)):
            t = candidate
            break
        t = candidate
    return t if p < 0.5 else -t


def binomial_half_lower_sum(n: int, k: int) -> int:
    """``sum(comb(n, i) for i in range(k + 1))`` exactly: ``2**n`` times ``P(X <= k)`` for
    ``X ~ Binomial(n, 1/2)``; one multiplication and one division of integers per term."""
    if k < 0:
        return 0
    if k >= n:
        return 1 << n
    term = total = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return total


#: Below this many trials the tail is summed exactly; above, it is bracketed (see
#: :func:`_tail_bounds`) and summed exactly only when the bracket straddles a rounding boundary.
_EXACT_TRIALS = 2_048
#: Fixed-point bits of the bracketed sum: each term's rounding costs 2**-128 of the largest term.
_GUARD_BITS = 128


@lru_cache(maxsize=16)  # a comparison asks for the same tail twice (two-sided and one-sided p)
def _tail_bounds(n: int, k: int) -> tuple[int, int, int]:
    """``(low, high, denominator)`` with ``low / denominator <= P(X <= k) <= high / denominator``
    for ``X ~ Binomial(n, 1/2)`` and ``0 <= k < n / 2``.

    The terms ``comb(n, i)`` fall geometrically below ``i = k`` (ratio ``i / (n - i + 1)``), so
    the sum walks down from ``comb(n, k)`` in fixed point (floors for ``low``, ceilings for
    ``high``) until the rest, bounded by a geometric series, is below 2**-64 of the sum: about
    6.5 sqrt(n) terms instead of k.
    """
    if n <= _EXACT_TRIALS:
        exact = binomial_half_lower_sum(n, k)
        return exact, exact, 1 << n
    one = 1 << _GUARD_BITS
    low_term = high_term = one
    low_sum = high_sum = one
    rest = 0
    for i in range(k, 0, -1):
        # comb(n, i - 1) = comb(n, i) * i / (n - i + 1)
        low_term = low_term * i // (n - i + 1)
        high_term = -(-high_term * i // (n - i + 1))
        low_sum += low_term
        high_sum += high_term
        # everything below i - 1 is at most high_term * rho / (1 - rho), rho = (i - 1) / (n - i + 2)
        j = i - 1
        rest = -(-high_term * j // (n - 2 * j + 1)) if j else 0
        if rest << 64 < low_sum:
            break
    scale = math.comb(n, k)
    return scale * low_sum, scale * (high_sum + rest), 1 << (n + _GUARD_BITS)


def _rounded(low: int, high: int, denominator: int, exact: Callable[[], int]) -> float:
    """``low / denominator`` when both ends of the bracket round to the same float (so the exact
    value does too); otherwise ``exact() / denominator`` (integer division is correctly rounded)."""
    low_value, high_value = low / denominator, high / denominator
    if low_value == high_value:
        return low_value
    return exact() / denominator  # pragma: no cover - needs a value within 2**-64 of a rounding boundary


def binomial_half_cdf(n: int, k: int) -> float:
    """``P(X <= k)`` for ``X ~ Binomial(n, 1/2)``, correctly rounded (as exact integer arithmetic
    would give it), in milliseconds even for 100,000 trials."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if 2 * k < n:
        low, high, denominator = _tail_bounds(n, k)
        return _rounded(low, high, denominator, lambda: binomial_half_lower_sum(n, k) << _GUARD_BITS)
    # P(X <= k) = 1 - P(X <= n - k - 1), and n - k - 1 < n / 2
    low, high, denominator = _tail_bounds(n, n - k - 1)
    return _rounded(
        denominator - high,
        denominator - low,
        denominator,
        lambda: ((1 << n) - binomial_half_lower_sum(n, n - k - 1)) << _GUARD_BITS,
    )


def binomial_half_two_sided(n: int, k: int) -> float:
    """``min(1, 2 P(X <= k))`` for ``X ~ Binomial(n, 1/2)`` and ``k <= n / 2``, correctly rounded:
    the two-sided exact binomial (sign, McNemar) p-value of ``k`` successes in ``n``."""
    if 2 * k >= n:
        return 1.0  # the lower tail holds at least half the mass
    low, high, denominator = _tail_bounds(n, k)
    return _rounded(
        min(2 * low, denominator), min(2 * high, denominator), denominator,
        lambda: min(2 * binomial_half_lower_sum(n, k) << _GUARD_BITS, denominator),
    )
