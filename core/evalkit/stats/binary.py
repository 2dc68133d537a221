"""Paired pass/fail outcomes: the same cases, passed or failed in the baseline and in the run.

Only the discordant cases carry information about a change: ``regressed`` (passed in the
baseline, fail now) and ``fixed`` (failed then, pass now).

* McNemar's test (McNemar 1947, Psychometrika 12:153–157), exact: under "no change" each
  discordant case is a regression with probability ½, so ``regressed ~ Binomial(regressed + fixed,
  ½)``. :func:`mcnemar_exact_p` is the two-sided p-value (the sum of both tails, at most 1);
  :func:`mcnemar_drop_p` the one-sided one for a drop, ``P(X >= regressed)``.
* The interval of the pass-rate difference is Newcombe's method 10 (Newcombe 1998, "Improved
  confidence intervals for the difference between binomial proportions based on paired data",
  Statist. Med. 17:2635–2650): the Wilson score intervals of the two rates combined by "square and
  add", with the correlation of the paired rates estimated from the 2×2 table (ϕ, continuity
  corrected as Newcombe specifies). It stays within [−1, 1], always contains the estimate, is
  never degenerate (zero discordant cases still give an interval of plausible changes), and in
  Newcombe's evaluation kept close to nominal coverage down to small samples, where the Wald
  interval fails.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import attrs

from . import _checks
from .distributions import binomial_half_cdf, binomial_half_two_sided
from .intervals import Interval, wilson_interval

__all__ = [
    "PairedBinary",
    "mcnemar_drop_p",
    "mcnemar_exact_p",
    "newcombe_interval",
    "paired_binary",
    "paired_binary_counts",
]


def mcnemar_exact_p(regressed: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value for ``regressed`` vs ``fixed`` flipped cases (1.0 if none).

    ``min(1, 2 P(X <= min(regressed, fixed)))`` with ``X ~ Binomial(regressed + fixed, ½)``,
    correctly rounded: the value exact integer arithmetic gives (``scipy.stats.binomtest`` and
    statsmodels' ``mcnemar(exact=True)`` agree).
    """
    regressed = _checks.count(regressed, "regressed")
    fixed = _checks.count(fixed, "fixed")
    n = regressed + fixed
    if n == 0:
        return 1.0
    return binomial_half_two_sided(n, min(regressed, fixed))


def mcnemar_drop_p(regressed: int, fixed: int) -> float:
    """One-sided exact McNemar p-value for a drop: ``P(X >= regressed)`` with ``X ~
    Binomial(regressed + fixed, ½)`` (1.0 if no case flipped)."""
    regressed = _checks.count(regressed, "regressed")
    fixed = _checks.count(fixed, "fixed")
    # P(X >= regressed) = P(X <= fixed) by symmetry
    return binomial_half_cdf(regressed + fixed, fixed)


def newcombe_interval(both_passed: int, regressed: int, fixed: int, both_failed: int, confidence: float = 0.95) -> Interval:
    """Newcombe's (1998) method 10 interval for the pass-rate difference, run minus baseline.

    With Newcombe's 2×2 cells (rows: the run passed / failed; columns: the baseline passed /
    failed) ``a = both_passed``, ``b = fixed``, ``c = regressed``, ``d = both_failed``, rates
    ``p1 = (a + b) / n`` (run) and ``p2 = (a + c) / n`` (baseline) with Wilson limits ``l1, u1``
    and ``l2, u2``, and ``θ = p1 − p2``::

        L = θ − √((p1 − l1)² − 2ϕ (p1 − l1)(u2 − p2) + (u2 − p2)²)
        U = θ + √((u1 − p1)² − 2ϕ (u1 − p1)(p2 − l2) + (p2 − l2)²)

    where ``ϕ = (A − n/2) / √((a+b)(c+d)(a+c)(b+d))`` for ``A = ad − bc > n/2``, ``0`` for
    ``0 <= A <= n/2``, ``A / √(…)`` for ``A < 0``, and ``0`` when a margin is empty.
    """
    cells = [_checks.count(value, name) for value, name in (
        (both_passed, "both_passed"), (regressed, "regressed"), (fixed, "fixed"), (both_failed, "both_failed"))]
    a, c, b, d = cells
    n = a + b + c + d
    if n == 0:
        raise _checks.StatisticsInputError("no paired cases: every cell of the 2×2 table is 0")
    confidence = _checks.probability(confidence, "confidence")
    p1, p2 = (a + b) / n, (a + c) / n
    theta = (b - c) / n
    run = wilson_interval(a + b, n, confidence)
    base = wilson_interval(a + c, n, confidence)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    elif cross > n / 2:
        phi = (cross - n / 2) / math.sqrt(margins)
    else:
        phi = cross / math.sqrt(margins)
    run_down, run_up = p1 - run.low, run.high - p1
    base_down, base_up = p2 - base.low, base.high - p2
    low = theta - math.sqrt(max(0.0, run_down**2 - 2 * phi * run_down * base_up + base_up**2))
    high = theta + math.sqrt(max(0.0, run_up**2 - 2 * phi * run_up * base_down + base_down**2))
    return Interval(max(-1.0, min(low, theta)), min(1.0, max(high, theta)), confidence)


@attrs.frozen
class PairedBinary:
    """Pass/fail outcomes of the same ``n`` cases in a baseline and a run.

    ``delta`` = ``rate − baseline_rate`` (a drop is negative); ``interval`` is Newcombe's method
    10 at ``interval.confidence``; ``p_value`` the two-sided exact McNemar p-value and ``p_drop``
    the one-sided one for a drop.
    """

    n: int
    both_passed: int
    regressed: int
    fixed: int
    both_failed: int
    baseline_rate: float
    rate: float
    delta: float
    interval: Interval
    p_value: float
    p_drop: float

    @property
    def exact_delta(self) -> Fraction:
        """``delta`` as an exact fraction ``(fixed − regressed) / n``: compare it with a tolerance
        exactly, so a drop equal to the tolerance is not "larger"."""
        return Fraction(self.fixed - self.regressed, self.n)

    @property
    def discordant(self) -> int:
        """Cases whose outcome changed: ``regressed + fixed``."""
        return self.regressed + self.fixed


def paired_binary_counts(
    both_passed: int, regressed: int, fixed: int, both_failed: int, confidence: float = 0.95
) -> PairedBinary:
    """The paired comparison of pass/fail outcomes from the four cells of their 2×2 table."""
    interval = newcombe_interval(both_passed, regressed, fixed, both_failed, confidence)
    n = both_passed + regressed + fixed + both_failed
    return PairedBinary(
        n=n,
        both_passed=both_passed,
        regressed=regressed,
        fixed=fixed,
        both_failed=both_failed,
        baseline_rate=(both_passed + regressed) / n,
        rate=(both_passed + fixed) / n,
        delta=(fixed - regressed) / n,
        interval=interval,
        p_value=mcnemar_exact_p(regressed, fixed),
        p_drop=mcnemar_drop_p(regressed, fixed),
    )


def paired_binary(baseline: Sequence[object], current: Sequence[object], confidence: float = 0.95) -> PairedBinary:
    """The paired comparison of pass/fail outcomes given case by case (``baseline[i]`` and
    ``current[i]`` are the same case; ``bool`` or 0/1)."""
    _checks.same_length(baseline, current)
    before = _checks.outcomes(baseline, "baseline")
    after = _checks.outcomes(current, "current")
    cells = [0, 0, 0, 0]  # both passed, regressed, both failed, fixed
    for then, now in zip(before, after, strict=True):
        cells[(0 if then else 2) + (0 if now == then else 1)] += 1
    both_passed, regressed, fixed_, both_failed = cells[0], cells[1], cells[3], cells[2]
    return paired_binary_counts(both_passed, regressed, fixed_, both_failed, confidence)
