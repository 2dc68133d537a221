"""Seeded resampling over whole cases: the paired bootstrap interval and the paired randomization
(sign-flip) test of the mean difference.

Both work on the vector of paired differences ``d_i = current_i − baseline_i`` only: the
statistic is their mean, and resampling whole cases (never individual answers) keeps each case's
two values together (Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640). The seed is
an argument and is recorded in the result, so every figure can be reproduced.

* :func:`paired_bootstrap` — Efron's bootstrap: ``resamples`` means of ``n`` differences drawn
  with replacement; the BCa interval (bias-corrected and accelerated: Efron 1987, JASA
  82:171–185; Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, §14.3 and eq. 14.15)
  or the percentile interval, with linear interpolation between order statistics — the same
  definitions as ``scipy.stats.bootstrap(..., paired=True)``.
* :func:`sign_flip_test` — Fisher's randomization test for paired data: under "no change" the
  sign of each difference is a coin flip. Smucker, Allan & Carterette (CIKM 2007) recommend it
  (with the bootstrap and the t test, which agree with it) for per-query retrieval metrics.
  Differences of equal size are grouped: the positive count of a group of ``c`` equal sizes is
  ``Binomial(c, ½)``, so the exact distribution is enumerated whenever it has at most
  ``EXACT_LIMIT`` outcomes (always for hit@k, whose differences are −1, 0, 1: it is then the exact
  sign test). Otherwise, when the Berry–Esseen bound shows the distribution within
  ``normal_error`` of its normal limit (mean 0, variance ``Σ d_i²``: tens of thousands of cases),
  that limit is used; else up to ``samples`` random sign patterns are drawn. A Monte Carlo
  p-value counts the observed pattern as one of the samples (``(1 + hits) / (1 + samples)``:
  Phipson & Smyth 2010, Stat. Appl. Genet. Mol. Biol. 9(1):39), so it is never 0; sampling stops
  early, with ``hits / drawn``, once both tails have been hit ``SEQUENTIAL_HITS`` times
  (Besag & Clifford 1991, Biometrika 78:301–304) — an unchanged run, whose p-values are large,
  costs a few hundred samples instead of ten thousand.
"""

from __future__ import annotations

import math
import random
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from operator import getitem
from typing import Literal

import attrs

from . import _checks
from .distributions import binomial_half_cdf, binomial_half_two_sided, normal_cdf, normal_quantile
from .intervals import Interval
from .means import paired_fractions

__all__ = [
    "EXACT_LIMIT",
    "SEQUENTIAL_HITS",
    "BootstrapInterval",
    "RandomizationTest",
    "bootstrap_from_differences",
    "bootstrap_intervals",
    "paired_bootstrap",
    "quantile",
    "sign_flip_from_differences",
    "sign_flip_test",
]

#: The sign-flip test is exact when the sums it can take number at most this many.
EXACT_LIMIT = 50_000
#: Sampling stops once both tails have been reached this often (Besag & Clifford 1991): the
#: p-values are then plainly not small, and known to about 7 % of their size.
SEQUENTIAL_HITS = 200

BootstrapMethod = Literal["bca", "percentile"]


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, linearly interpolated between order statistics
    (Hyndman & Fan's definition 7, numpy's and scipy's default)."""
    position = (len(ordered) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    weight = position - below
    return ordered[below] + (ordered[above] - ordered[below]) * weight


@attrs.frozen
class BootstrapInterval:
    """A seeded paired bootstrap interval of the mean difference (run minus baseline).

    ``method`` is the one actually used: ``bca``, or ``percentile`` when asked for or when the
    BCa correction is undefined (every resampled mean on one side of the estimate).
    """

    n: int
    delta: float
    interval: Interval
    method: str
    resamples: int
    seed: int


def _resampled_means(diffs: Sequence[float], resamples: int, seed: int) -> list[float]:
    n = len(diffs)
    draw = random.Random(seed).choices
    fsum = math.fsum
    return sorted(fsum(draw(diffs, k=n)) / n for _ in range(resamples))


def _bca_levels(diffs: Sequence[float], delta: float, means: Sequence[float], confidence: float) -> tuple[float, float] | None:
    """The BCa quantile levels of the interval ends, or ``None`` when the bias correction is
    undefined (every resampled mean on one side of the estimate)."""
    below = sum(1 for m in means if m < delta)
    at_or_below = below + sum(1 for m in means if m == delta)
    share = (below + at_or_below) / (2 * len(means))
    if not 0 < share < 1:
        return None
    z0 = normal_quantile(share)
    # acceleration from the jackknife: for the mean, U_i = d_i − d̄
    spread = [d - delta for d in diffs]
    squares = math.fsum(u * u for u in spread)
    if squares == 0:  # a spread below float resolution
        return None
    acceleration = math.fsum(u**3 for u in spread) / (6 * squares**1.5)
    levels = []
    for z in (normal_quantile((1 - confidence) / 2), normal_quantile((1 + confidence) / 2)):
        shifted = z0 + z
        levels.append(normal_cdf(z0 + shifted / (1 - acceleration * shifted)))
    return levels[0], levels[1]


def bootstrap_from_differences(
    diffs: Sequence[float],
    confidence: float = 0.95,
    *,
    resamples: int = 2_000,
    seed: int = 0,
    method: BootstrapMethod = "bca",
) -> BootstrapInterval:
    """:func:`paired_bootstrap` on paired differences already taken (each in [−1, 1])."""
    return bootstrap_intervals(diffs, (confidence,), resamples=resamples, seed=seed, method=method)[0]


def bootstrap_intervals(
    diffs: Sequence[float],
    confidences: Sequence[float],
    *,
    resamples: int = 2_000,
    seed: int = 0,
    method: BootstrapMethod = "bca",
) -> tuple[BootstrapInterval, ...]:
    """Bootstrap intervals of the mean of ``diffs`` at several confidence levels, all read from
    the same ``resamples`` (a verdict's 95 % interval and its decision's ``1 − 2α`` one)."""
    levels = [_checks.probability(c, "confidence") for c in confidences]
    resamples = _checks.count(resamples, "resamples", minimum=1)
    seed = _checks.seed(seed)
    if method not in ("bca", "percentile"):
        raise _checks.StatisticsInputError(f"method is {method!r}: 'bca' or 'percentile'")
    n = len(diffs)
    if n == 0:
        raise _checks.StatisticsInputError("no paired cases: the differences are empty")
    delta = math.fsum(diffs) / n
    if n == 1:  # one case says nothing about noise
        return tuple(BootstrapInterval(n, delta, Interval(-1.0, 1.0, c), method, resamples, seed) for c in levels)
    if all(d == diffs[0] for d in diffs):  # every resample is the same: no spread
        point = diffs[0]
        return tuple(BootstrapInterval(n, point, Interval(point, point, c), method, resamples, seed) for c in levels)
    means = _resampled_means(diffs, resamples, seed)
    return tuple(_interval(diffs, delta, means, c, method, seed) for c in levels)


def _interval(
    diffs: Sequence[float], delta: float, means: Sequence[float], confidence: float, method: BootstrapMethod, seed: int
) -> BootstrapInterval:
    levels = _bca_levels(diffs, delta, means, confidence) if method == "bca" else None
    used = "bca" if levels is not None else "percentile"
    if levels is None:
        levels = ((1 - confidence) / 2, (1 + confidence) / 2)
    interval = Interval(quantile(means, levels[0]), quantile(means, levels[1]), confidence)
    return BootstrapInterval(len(diffs), delta, interval, used, len(means), seed)


def paired_bootstrap(
    baseline: Sequence[object],
    current: Sequence[object],
    confidence: float = 0.95,
    *,
    resamples: int = 2_000,
    seed: int = 0,
    method: BootstrapMethod = "bca",
) -> BootstrapInterval:
    """A seeded paired bootstrap interval of ``mean(current − baseline)`` (values in [0, 1],
    ``baseline[i]`` and ``current[i]`` the same case): whole cases are resampled, by resampling
    their differences. Costs ``resamples × n`` draws (2,000 × 2,000 cases: about a second)."""
    before, after = paired_fractions(baseline, current)
    diffs = [now - then for then, now in zip(before, after, strict=True)]
    return bootstrap_from_differences(diffs, confidence, resamples=resamples, seed=seed, method=method)


@attrs.frozen
class RandomizationTest:
    """The paired randomization (sign-flip) test of the mean difference (run minus baseline).

    ``p_value`` is two-sided (``P(|T| >= |t|)``), ``p_drop`` one-sided for a drop
    (``P(T <= t)``). ``method`` says how the sign-flip distribution was read: ``exact``
    (enumerated), ``monte_carlo`` (``samples`` random sign patterns from ``seed``, fewer when
    both p-values were plainly large) or ``normal``
    (its normal limit, used only when the Berry–Esseen bound ``error_bound`` on its distance from
    the exact distribution is small; ``samples`` is then 0).
    """

    n: int
    delta: float
    p_value: float
    p_drop: float
    method: str
    samples: int
    seed: int
    error_bound: float = 0.0


def _groups(diffs: Sequence[float]) -> tuple[list[float], list[int], list[int]]:
    """Sizes of the non-zero differences, how many share each size, and how many of those are
    positive."""
    nonzero = [d for d in diffs if d]
    sizes = Counter(map(abs, nonzero))
    positive = Counter(filter((0.0).__lt__, nonzero))
    values = sorted(sizes)
    return values, [sizes[v] for v in values], [positive[v] for v in values]


def _outcomes_at_most(counts: Sequence[int], limit: int) -> bool:
    """Whether the group sums can take at most ``limit`` values (``prod(c + 1)``, stopped early)."""
    outcomes = 1
    for count in counts:
        outcomes *= count + 1
        if outcomes > limit:
            return False
    return True


def _binomial_half_weights(count: int) -> list[float]:
    """``P(X = k)`` for ``X ~ Binomial(count, ½)``, k = 0..count."""
    log_half = count * math.log(2.0)
    top = math.lgamma(count + 1)
    return [math.exp(top - math.lgamma(k + 1) - math.lgamma(count - k + 1) - log_half) for k in range(count + 1)]


def _exact_sign_flip(values: list[float], counts: list[int], observed: float, slack: float) -> tuple[float, float]:
    distribution = {0.0: 1.0}
    for value, count in zip(values, counts, strict=True):
        weights = _binomial_half_weights(count)
        step: dict[float, float] = {}
        for total, probability in distribution.items():
            for k, weight in enumerate(weights):
                key = total + value * (2 * k - count)
                step[key] = step.get(key, 0.0) + probability * weight
        distribution = step
    lower = math.fsum(p for t, p in distribution.items() if t <= observed + slack)
    extreme = math.fsum(p for t, p in distribution.items() if abs(t) >= abs(observed) - slack)
    return min(1.0, extreme), min(1.0, lower)


def _grouped_sums(values: list[float], counts: list[int], samples: int, rng: random.Random) -> Iterator[float]:
    """Sampled sums when the differences take few sizes: a group of ``c`` equal sizes ``v``
    contributes ``v (2X − c)`` with ``X ~ Binomial(c, ½)``, the set bits of ``c`` random bits."""
    bits = rng.getrandbits
    pairs = list(zip(values, counts, strict=True))
    fsum = math.fsum
    for _ in range(samples):
        yield fsum(v * (2 * bits(c).bit_count() - c) for v, c in pairs)


def _byte_table_sums(sizes: list[float], samples: int, rng: random.Random) -> Iterator[float]:
    """Sampled sums for many distinct sizes: the cases in blocks of eight, each block's 256
    signed sums tabulated once, so a sample is one random byte per block looked up and summed —
    a few nanoseconds per case, in C."""
    tables = []
    for start in range(0, len(sizes), 8):
        signed = [0.0]  # every sign pattern of the block; which byte names which pattern does not matter
        for size in sizes[start : start + 8]:
            signed = [t - size for t in signed] + [t + size for t in signed]
        tables.append(array("d", signed * (256 // len(signed))))
    draw = rng.randbytes
    fsum = math.fsum
    for _ in range(samples):
        yield fsum(map(getitem, tables, draw(len(tables))))


#: Berry–Esseen constant for independent, non-identically distributed summands (Shevtsova 2010,
#: Doklady Math. 82:862–864).
_BERRY_ESSEEN = 0.56


def sign_flip_from_differences(
    diffs: Sequence[float],
    *,
    samples: int = 10_000,
    seed: int = 0,
    normal_error: float = 0.01,
    stop_after: int | None = SEQUENTIAL_HITS,
) -> RandomizationTest:
    """:func:`sign_flip_test` on paired differences already taken (each in [−1, 1]).

    ``stop_after`` hits in both tails end the sampling early (``None``: always draw
    ``samples``); ``normal_error`` is the largest Berry–Esseen bound at which the normal limit
    replaces sampling."""
    samples = _checks.count(samples, "samples", minimum=1)
    seed = _checks.seed(seed)
    n = len(diffs)
    if n == 0:
        raise _checks.StatisticsInputError("no paired cases: the differences are empty")
    delta = math.fsum(diffs) / n
    values, counts, positives = _groups(diffs)
    if not values:  # every difference is 0: nothing changed
        return RandomizationTest(n, delta, 1.0, 1.0, "exact", 0, seed)
    if len(values) == 1:  # one size (hit@k): the exact sign test; T <= t exactly when X <= positives
        count, positive = counts[0], positives[0]
        p_value = binomial_half_two_sided(count, min(positive, count - positive))
        return RandomizationTest(n, delta, p_value, binomial_half_cdf(count, positive), "exact", 0, seed)
    # the observed sum, computed the way the enumerated sums are
    observed = math.fsum(v * (2 * p - c) for v, c, p in zip(values, counts, positives, strict=True))
    # sums of up to n terms of at most 1 agree to far better than this; distinct sums differ by more
    slack = 1e-10 * (1.0 + math.fsum(v * c for v, c in zip(values, counts, strict=True)))
    if _outcomes_at_most(counts, EXACT_LIMIT):
        p_value, p_drop = _exact_sign_flip(values, counts, observed, slack)
        return RandomizationTest(n, delta, p_value, p_drop, "exact", 0, seed)
    variance = math.fsum(v * v * c for v, c in zip(values, counts, strict=True))
    bound = _BERRY_ESSEEN * math.fsum(v**3 * c for v, c in zip(values, counts, strict=True)) / variance**1.5
    if bound <= normal_error:  # the sign-flip sum has mean 0 and variance sum(d²) exactly
        z = observed / math.sqrt(variance)
        return RandomizationTest(n, delta, 2 * normal_cdf(-abs(z)), normal_cdf(z), "normal", 0, seed, bound)
    rng = random.Random(seed)
    if len(values) <= max(16, n // 64):
        sums = _grouped_sums(values, counts, samples, rng)
    else:
        sums = _byte_table_sums([v for v, c in zip(values, counts, strict=True) for _ in range(c)], samples, rng)
        observed = math.fsum(diffs)
    low, high = observed + slack, abs(observed) - slack
    lower = extreme = drawn = 0
    for total in sums:
        lower += total <= low
        extreme += abs(total) >= high
        drawn += 1
        if stop_after is not None and lower >= stop_after and extreme >= stop_after:
            # Besag & Clifford's sequential p-value: both tails are plainly not small
            return RandomizationTest(n, delta, extreme / drawn, lower / drawn, "monte_carlo", drawn, seed)
    p_value = min(1.0, (1 + extreme) / (1 + samples))
    return RandomizationTest(n, delta, p_value, min(1.0, (1 + lower) / (1 + samples)), "monte_carlo", samples, seed)


def sign_flip_test(
    baseline: Sequence[object],
    current: Sequence[object],
    *,
    samples: int = 10_000,
    seed: int = 0,
    stop_after: int | None = SEQUENTIAL_HITS,
) -> RandomizationTest:
    """The paired randomization test of ``mean(current − baseline)`` (values in [0, 1],
    ``baseline[i]`` and ``current[i]`` the same case): exact when the differences take few sizes,
    its normal limit when that is provably close, otherwise ``samples`` seeded random sign
    patterns."""
    before, after = paired_fractions(baseline, current)
    diffs = [now - then for then, now in zip(before, after, strict=True)]
    return sign_flip_from_differences(diffs, samples=samples, seed=seed, stop_after=stop_after)
