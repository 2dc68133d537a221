"""Paired values in [0, 1] — mean scores, pass fractions under repeats, per-question retrieval
metrics — compared through their mean paired difference, with Student's paired t interval.

For case ``i`` the difference is ``d_i = current_i − baseline_i``; the estimate is their mean
``d̄`` and the interval ``d̄ ± t(1 − (1 − confidence)/2, n − 1) · s_d / √n`` (Student 1908; the
paired design removes the between-case variance both runs share — Miller 2024, "Adding Error Bars
to Evals", arXiv:2411.00640, §4). The t interval is adequate from about 30 cases on, and for
retrieval metrics Smucker, Allan & Carterette (CIKM 2007) found it agreeing closely with the
randomization test and the bootstrap; for smaller or very skewed sets compare it with
:func:`~evalkit.stats.resampling.paired_bootstrap`. The interval is clipped to [−1, 1], the range
a difference of two fractions can take.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import mul

import attrs

from . import _checks
from .distributions import student_t_cdf, student_t_quantile
from .intervals import Interval

__all__ = ["PairedMean", "differences", "paired_fractions", "paired_t", "paired_t_from_differences"]


def differences(baseline: Sequence[object], current: Sequence[object]) -> list[float]:
    """``current[i] − baseline[i]`` for paired values in [0, 1] (checked: same length, not empty,
    every value a number in [0, 1])."""
    before, after = paired_fractions(baseline, current)
    return [now - then for then, now in zip(before, after, strict=True)]


def mean_and_sd(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the sample standard deviation (``n − 1`` in the denominator; at least two values)."""
    n = len(values)
    mean = math.fsum(values) / n
    deviations = [x - mean for x in values]
    return mean, math.sqrt(math.fsum(map(mul, deviations, deviations)) / (n - 1))


@attrs.frozen
class PairedMean:
    """The mean paired difference of ``n`` cases with its paired t interval and test.

    ``delta`` = mean(current) − mean(baseline) (a drop is negative; the two means are ``None``
    when only the differences were given); ``sd`` is the standard
    deviation of the paired differences (``None`` for one case); ``t`` the statistic ``d̄ / (s_d /
    √n)`` (``None`` when it is undefined: one case, or differences that are all equal);
    ``p_value`` the two-sided p-value and ``p_drop`` the one-sided one for a drop.

    One case says nothing about noise: its interval is the whole range [−1, 1] and both p-values
    are 1. Differences that are all equal have no spread: the interval is the single point
    ``delta`` and the p-values are 0 (for a drop) or 1.
    """

    n: int
    baseline_mean: float | None
    mean: float | None
    delta: float
    sd: float | None
    t: float | None
    df: int
    interval: Interval
    p_value: float
    p_drop: float


def paired_t(baseline: Sequence[object], current: Sequence[object], confidence: float = 0.95) -> PairedMean:
    """Student's paired t interval and test for the mean of ``current − baseline`` (values in
    [0, 1], ``baseline[i]`` and ``current[i]`` the same case); equal to
    ``scipy.stats.ttest_rel(current, baseline)`` and its ``confidence_interval``, clipped to
    [−1, 1]."""
    before, after = paired_fractions(baseline, current)
    n = len(before)
    means = (math.fsum(before) / n, math.fsum(after) / n)
    return paired_t_from_differences([now - then for then, now in zip(before, after, strict=True)], confidence, means)


def paired_fractions(baseline: Sequence[object], current: Sequence[object]) -> tuple[list[float], list[float]]:
    """Both sides checked: the same length, not empty, every value a number in [0, 1]."""
    _checks.same_length(baseline, current)
    return _checks.fractions(baseline, "baseline"), _checks.fractions(current, "current")


def paired_t_from_differences(
    diffs: Sequence[float], confidence: float = 0.95, means: tuple[float, float] | None = None
) -> PairedMean:
    """:func:`paired_t` on differences already taken; ``means`` are the two sides' means when
    known (``None`` otherwise)."""
    confidence = _checks.probability(confidence, "confidence")
    n = len(diffs)
    if n == 0:
        raise _checks.StatisticsInputError("no paired cases: the differences are empty")
    baseline_mean, mean = means if means is not None else (None, None)
    df = n - 1
    if n == 1:
        return PairedMean(n, baseline_mean, mean, diffs[0], None, None, df, Interval(-1.0, 1.0, confidence), 1.0, 1.0)
    first = diffs[0]
    delta, sd = (first, 0.0) if all(d == first for d in diffs) else mean_and_sd(diffs)
    se = sd / math.sqrt(n)
    if se == 0:  # no spread (or one below float resolution): a point interval, and no statistic
        point = Interval(delta, delta, confidence)
        p_value, p_drop = (1.0, 1.0) if delta == 0 else (0.0, 0.0 if delta < 0 else 1.0)
        return PairedMean(n, baseline_mean, mean, delta, sd, None, df, point, p_value, p_drop)
    t = delta / se
    half = student_t_quantile(0.5 + confidence / 2, df) * se
    interval = Interval(max(-1.0, delta - half), min(1.0, delta + half), confidence)
    p_value = min(1.0, 2 * student_t_cdf(-abs(t), df))
    return PairedMean(n, baseline_mean, mean, delta, sd, t, df, interval, p_value, student_t_cdf(t, df))
