"""The minimum detectable drop of a paired comparison, and the cases or repeats a target drop needs.

For a one-sided test at level ``α`` with power ``1 − β`` on ``n`` paired cases whose differences
have standard deviation ``σ_d``, the smallest true drop detected with that power is, in the
normal approximation (e.g. Chow, Shao & Wang, *Sample Size Calculations in Clinical Research*,
2nd ed. 2008, §3.1; van Belle, *Statistical Rules of Thumb*, 2nd ed. 2008, §2.3)::

    MDD = (z(1 − α) + z(1 − β)) · σ_d / √n

Solving the same formula gives the cases ``n`` — or, since the variance of a case's mean over
``K`` independent answers shrinks by ``K``, the repeats ``K`` — needed to detect a drop ``X``.

``σ_d`` comes from one of four sources (:class:`NoiseEstimate`), best first:

* ``history`` — the paired differences of earlier unchanged runs of the same scope (A/A pairs);
* ``repeats`` — the pooled within-case variance of each case's ``K`` answers: two independent runs
  of an unchanged case differ by ``2 σ_w² / K``;
* ``observed`` — the paired differences of the comparison at hand;
* ``independent_bernoulli`` — conservative, from the baseline rate alone: independent pass/fail
  answers at rate ``p`` differ with variance ``2 p (1 − p)`` (30 cases at ``p = 0.8``,
  ``α = 0.05``, power 0.8: MDD ≈ 0.26). It is the largest variance a set of cases with that mean
  rate can have, whatever the spread of their difficulties.

For pass/fail outcomes with one answer per case no exact paired test can flag fewer than ``k``
regressions, ``k`` the smallest with ``2^−k <= α`` (5 at ``α = 0.05``: five regressions and no
fix give McNemar's one-sided p = 1/32); the drop is then at least ``k / n`` however small the
noise — a deterministic model with a perfect baseline still needs five broken cases to fail a
30-case gate. :func:`minimum_detectable_drop` applies that floor when told the outcomes are
whole cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from . import _checks
from .distributions import binomial_half_cdf, normal_quantile, regularized_beta
from .means import mean_and_sd

__all__ = [
    "DetectableDrop",
    "NoiseEstimate",
    "cases_needed",
    "choose_noise",
    "connor_detectable_drop",
    "mcnemar_detectable_drop",
    "mcnemar_power",
    "minimum_detectable_drop",
    "noise_from_differences",
    "noise_from_history",
    "noise_from_rate",
    "noise_from_repeats",
    "repeats_needed",
    "smallest_flagged_regressions",
]


@attrs.frozen
class NoiseEstimate:
    """The spread of one case's paired difference, and where it was measured.

    ``variance`` is per answer: the variance of the difference between two runs that answer
    the case once each. With ``repeats`` answers per case on each side the difference of the two
    means has variance ``variance / repeats`` (:attr:`sd` is its square root). ``cases`` is how
    many cases (or differences) the estimate rests on.
    """

    variance: float
    repeats: int
    source: str
    cases: int

    @property
    def sd(self) -> float:
        """``σ_d``: the standard deviation of a case's paired difference at :attr:`repeats`."""
        return math.sqrt(self.variance / self.repeats)

    def with_repeats(self, repeats: int) -> NoiseEstimate:
        """The same noise for cases answered ``repeats`` times (within-case noise shrinks by it)."""
        return attrs.evolve(self, repeats=_checks.count(repeats, "repeats", minimum=1))


def _differences(values: Sequence[object], name: str) -> list[float]:
    return _checks.fractions(values, name, low=-1.0)


def noise_from_differences(differences: Sequence[object], repeats: int = 1) -> NoiseEstimate:
    """``σ_d`` measured on the paired differences at hand (``current − baseline`` per case, each
    the mean of ``repeats`` answers); at least two differences."""
    diffs = _differences(differences, "differences")
    if len(diffs) < 2:
        raise _checks.StatisticsInputError(f"a spread needs at least 2 differences, got {len(diffs)}")
    repeats = _checks.count(repeats, "repeats", minimum=1)
    _, sd = mean_and_sd(diffs)
    return NoiseEstimate(sd * sd * repeats, repeats, "observed", len(diffs))


def noise_from_history(history: Sequence[Sequence[object]], repeats: int = 1) -> NoiseEstimate:
    """``σ_d`` from earlier unchanged runs of the same scope: each entry is the paired differences
    of one comparison of two such runs (cases answered ``repeats`` times); their variances are
    pooled (weighted by their degrees of freedom)."""
    repeats = _checks.count(repeats, "repeats", minimum=1)
    squares = 0.0
    freedom = 0
    cases = 0
    for index, comparison in enumerate(history):
        diffs = _differences(comparison, f"history[{index}]")
        if len(diffs) < 2:
            continue
        mean = math.fsum(diffs) / len(diffs)
        squares += math.fsum((d - mean) ** 2 for d in diffs)
        freedom += len(diffs) - 1
        cases += len(diffs)
    if freedom == 0:
        raise _checks.StatisticsInputError("history holds no comparison of at least 2 paired cases")
    return NoiseEstimate(squares / freedom * repeats, repeats, "history", cases)


def noise_from_repeats(answers: Sequence[Sequence[object]]) -> NoiseEstimate:
    """``σ_d`` from repeated answers: ``answers[i]`` are case ``i``'s graded answers in one run
    (pass/fail as 0/1, or scores in [0, 1]).

    The within-case sample variances are pooled (weighted by their degrees of freedom; cases with
    fewer than 2 answers are skipped); an unchanged case's two runs then differ with per-answer
    variance ``2 σ_w²``. ``repeats`` is the cases' number of answers (their harmonic mean, rounded,
    when it varies).
    """
    squares = 0.0
    freedom = 0
    reciprocal = 0.0
    cases = 0
    for index, case in enumerate(answers):
        values = _checks.fractions(case, f"answers[{index}]")
        if len(values) < 2:
            continue
        mean = math.fsum(values) / len(values)
        squares += math.fsum((v - mean) ** 2 for v in values)
        freedom += len(values) - 1
        reciprocal += 1 / len(values)
        cases += 1
    if cases == 0:
        raise _checks.StatisticsInputError("no case has at least 2 answers: repeats cannot measure the noise")
    repeats = max(1, round(cases / reciprocal))
    return NoiseEstimate(2 * squares / freedom, repeats, "repeats", cases)


def noise_from_rate(rate: float, repeats: int = 1) -> NoiseEstimate:
    """The conservative ``σ_d`` of independent pass/fail answers at the baseline ``rate``:
    per-answer variance ``2 p (1 − p)`` (for mean scores in [0, 1], ``rate`` is the mean: no
    score with that mean varies more)."""
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
        raise _checks.StatisticsInputError(f"rate is {rate!r}, not a number in [0, 1]")
    repeats = _checks.count(repeats, "repeats", minimum=1)
    return NoiseEstimate(2 * rate * (1 - rate), repeats, "independent_bernoulli", 0)


def choose_noise(*estimates: NoiseEstimate | None) -> NoiseEstimate | None:
    """The first estimate (best source first) that measured some noise; when none did, the last
    one given (``None`` when none was given). An estimate of exactly 0 — identical runs, a
    deterministic model — says nothing about how a changed model would vary, so a later source
    is preferred to it."""
    given = [estimate for estimate in estimates if estimate is not None]
    for estimate in given:
        if estimate.variance > 0:
            return estimate
    return given[-1] if given else None


def smallest_flagged_regressions(alpha: float) -> int:
    """The fewest regressions (with no fix) for which the exact one-sided paired test reaches
    ``alpha``: the smallest ``k`` with ``2^−k <= alpha`` (5 at 0.05)."""
    alpha = _checks.alpha_level(alpha)
    return math.ceil(-math.log2(alpha) - 1e-12)


@attrs.frozen
class DetectableDrop:
    """The minimum detectable drop of ``n`` paired cases answered ``repeats`` times.

    ``drop`` (a fraction, at most 1) is detected by a one-sided test at ``alpha`` with
    probability ``power``; ``sd`` and ``source`` say which noise it assumes; ``floor`` is the
    whole-case floor ``k / n`` when it applied (0 otherwise); ``method`` is ``normal`` (the
    formula) or ``exact_mcnemar`` (:func:`mcnemar_detectable_drop`). A tolerance below ``drop`` is a
    promise the set cannot keep: such a drop is not told apart from noise.
    """

    drop: float
    n: int
    repeats: int
    sd: float
    source: str
    alpha: float
    power: float
    floor: float = 0.0
    method: str = "normal"


def _z_sum(alpha: float, power: float) -> float:
    alpha = _checks.alpha_level(alpha)
    power = _checks.probability(power, "power")
    return normal_quantile(1 - alpha) + normal_quantile(power)


def minimum_detectable_drop(
    noise: NoiseEstimate, n: int, *, alpha: float = 0.05, power: float = 0.8, whole_cases: bool = False
) -> DetectableDrop:
    """``(z(1 − α) + z(power)) · σ_d / √n`` for ``n`` paired cases, at most 1; with
    ``whole_cases`` (one pass/fail answer per case) at least ``k / n`` (see
    :func:`smallest_flagged_regressions`)."""
    n = _checks.count(n, "n", minimum=1)
    drop = _z_sum(alpha, power) * noise.sd / math.sqrt(n)
    floor = smallest_flagged_regressions(alpha) / n if whole_cases and noise.repeats == 1 else 0.0
    return DetectableDrop(min(1.0, max(drop, floor)), n, noise.repeats, noise.sd, noise.source, alpha, power, floor)


def _target(drop: float) -> float:
    if isinstance(drop, bool) or not isinstance(drop, (int, float)) or not 0 < drop <= 1:
        raise _checks.StatisticsInputError(f"drop is {drop!r}, not a number in (0, 1]")
    return float(drop)


def cases_needed(
    noise: NoiseEstimate, drop: float, *, alpha: float = 0.05, power: float = 0.8, whole_cases: bool = False
) -> int:
    """The fewest paired cases whose minimum detectable drop is at most ``drop`` (at least 2)."""
    drop = _target(drop)
    needed = math.ceil((_z_sum(alpha, power) * noise.sd / drop) ** 2 - 1e-9)
    if whole_cases and noise.repeats == 1:
        needed = max(needed, math.ceil(smallest_flagged_regressions(alpha) / drop - 1e-9))
    return max(2, needed)


def repeats_needed(noise: NoiseEstimate, drop: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """The fewest answers per case that bring the minimum detectable drop of ``n`` cases to at most
    ``drop``: ``K = (z(1 − α) + z(power))² · variance / (n · drop²)``, at least 1. It assumes the
    noise is within cases (what repeats average away), as it is between unchanged runs."""
    drop = _target(drop)
    n = _checks.count(n, "n", minimum=1)
    return max(1, math.ceil(_z_sum(alpha, power) ** 2 * noise.variance / (n * drop * drop) - 1e-9))


def _binomial_upper(successes: int, trials: int, probability: float) -> float:
    """``P(Binomial(trials, probability) >= successes)`` = ``I_p(successes, trials − successes + 1)``."""
    if successes <= 0:
        return 1.0
    if successes > trials:
        return 0.0
    if probability <= 0.0:
        return 0.0
    if probability >= 1.0:
        return 1.0
    return regularized_beta(probability, successes, trials - successes + 1)


class _UpperTail:
    """``P(Binomial(m, p) >= c)`` while ``m`` grows one at a time and ``c`` moves a little: each
    step is a few probability terms (``P(X(m) >= c) = P(X(m−1) >= c) + p P(X(m−1) = c − 1)``),
    not a new incomplete beta function."""

    def __init__(self, probability: float) -> None:
        self.p = probability
        self.log_p = math.log(probability)
        self.log_q = math.log1p(-probability)
        self.m = -2
        self.c = 0
        self.tail = 0.0

    def pmf(self, j: int, m: int) -> float:
        if j < 0 or j > m:
            return 0.0
        return math.exp(
            math.lgamma(m + 1) - math.lgamma(j + 1) - math.lgamma(m - j + 1) + j * self.log_p + (m - j) * self.log_q
        )

    def at(self, m: int, c: int) -> float:
        if m == self.m + 1 and abs(c - self.c) <= 8:
            tail = self.tail + self.p * self.pmf(self.c - 1, self.m)
            k = self.c
            while k < c:
                tail -= self.pmf(k, m)
                k += 1
            while k > c:
                k -= 1
                tail += self.pmf(k, m)
        elif m == self.m and abs(c - self.c) <= 8:
            tail, k = self.tail, self.c
            while k < c:
                tail -= self.pmf(k, m)
                k += 1
            while k > c:
                k -= 1
                tail += self.pmf(k, m)
        else:
            tail = _binomial_upper(c, m, self.p)
        self.m, self.c, self.tail = m, c, min(1.0, max(0.0, tail))
        return self.tail


class _CriticalRegressions:
    """The fewest regressions among ``m`` flipped cases the exact one-sided McNemar test flags at
    ``alpha`` (``m + 1`` when none does), for ``m`` asked in increasing order (cached)."""

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        self.tail = _UpperTail(0.5)
        self.known: dict[int, int] = {}
        self.z = normal_quantile(1 - alpha)

    def __call__(self, m: int) -> int:
        if m in self.known:
            return self.known[m]
        previous = self.known.get(m - 1)
        r = previous if previous is not None else max(m // 2 + 1, math.ceil(m / 2 + self.z * math.sqrt(m) / 2))
        r = min(r, m + 1)
        while r <= m and not self._flags(m, r):
            r += 1
        while r - 1 > m // 2 and self._flags(m, r - 1):
            r -= 1
        self.known[m] = r
        return r

    def _flags(self, m: int, r: int) -> bool:
        """Whether ``r`` regressions among ``m`` flips are flagged: ``P(X >= r) <= alpha``.

        The running tail gathers rounding error step by step; where it is within a millionth of
        ``alpha`` — an attainable p-value such as 1/16 at ``alpha = 0.0625`` — the gate's own exact
        p-value (``mcnemar_drop_p``: ``P(X <= m − r)`` by symmetry) decides, as it does for a run.
        """
        tail = self.tail.at(m, r)
        if abs(tail - self.alpha) <= 1e-6 * self.alpha:
            return binomial_half_cdf(m, m - r) <= self.alpha
        return tail <= self.alpha


def _check_rate_drop(rate: object, drop: object) -> tuple[float, float]:
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
        raise _checks.StatisticsInputError(f"rate is {rate!r}, not a number in [0, 1]")
    if isinstance(drop, bool) or not isinstance(drop, (int, float)) or not 0 <= drop <= rate:
        raise _checks.StatisticsInputError(f"drop is {drop!r}, not a number between 0 and the rate {rate!r}")
    return float(rate), float(drop)


def _discordance(rate: float, drop: float) -> tuple[float, float]:
    """The chance a case flips, and the share of flips that are regressions, for independent
    answers at ``rate`` (baseline) and ``rate − drop`` (run)."""
    after = rate - drop
    regress = rate * (1 - after)
    discordance = regress + (1 - rate) * after
    return discordance, (regress / discordance if discordance else 0.0)


def _exact_power(n: int, rate: float, drop: float, critical: _CriticalRegressions) -> float:
    discordance, share = _discordance(rate, drop)
    if discordance == 0:
        return 0.0
    centre = n * discordance
    spread = 8 * math.sqrt(n * discordance * (1 - discordance)) + 8  # beyond: below 1e-15 of the mass
    flips = _UpperTail(discordance) if discordance < 1 else None
    regressions = _UpperTail(share) if 0 < share < 1 else None
    total = 0.0
    for m in range(max(0, math.floor(centre - spread)), min(n, math.ceil(centre + spread)) + 1):
        needed = critical(m)
        if needed > m:
            continue
        weight = flips.pmf(m, n) if flips is not None else float(m == n)
        if regressions is not None:
            caught = regressions.at(m, needed)
        else:
            caught = 1.0 if share >= 1 else 0.0
        total += weight * caught
    return min(1.0, total)


def mcnemar_power(n: int, rate: float, drop: float, *, alpha: float = 0.05) -> float:
    """The exact power of the one-sided exact McNemar test on ``n`` cases answered once, when the
    baseline passes each case with probability ``rate`` and the run, independently, with
    ``rate − drop``.

    A case regresses with probability ``r = rate (1 − rate + drop)`` and is fixed with ``f =
    (1 − rate) (rate − drop)``; the discordant count ``m`` is ``Binomial(n, r + f)`` and, given
    ``m``, the regressions are ``Binomial(m, r / (r + f))``; the test flags ``c(m)`` or more. The
    sum over ``m`` keeps the terms within 8 standard deviations of its mean.
    """
    n = _checks.count(n, "n", minimum=1)
    alpha = _checks.alpha_level(alpha)
    rate, drop = _check_rate_drop(rate, drop)
    return _exact_power(n, rate, drop, _CriticalRegressions(alpha))


def _connor_drop(n: int, rate: float, alpha: float, power: float) -> float:
    """The drop solving Connor's (1987) normal approximation ``Δ √n = z(1 − α) √ψ + z(power)
    √(ψ − Δ²)`` (by bisection; ``rate`` when it has no root below it)."""
    z_alpha, z_power = normal_quantile(1 - alpha), normal_quantile(power)

    def gap(drop: float) -> float:
        flips, _ = _discordance(rate, drop)
        return drop * math.sqrt(n) - z_alpha * math.sqrt(flips) - z_power * math.sqrt(max(0.0, flips - drop * drop))

    low, high = 0.0, rate
    if gap(high) < 0:
        return rate
    while high - low > 1e-9:
        middle = (low + high) / 2
        low, high = (low, middle) if gap(middle) >= 0 else (middle, high)
    return high


def connor_detectable_drop(n: int, rate: float, *, alpha: float = 0.05, power: float = 0.8) -> DetectableDrop:
    """The drop from ``rate`` that the one-sided McNemar test on ``n`` cases answered once detects
    with probability ``power``, in Connor's (1987) normal approximation (see
    :func:`mcnemar_detectable_drop`): what a large set uses, where the exact sum agrees with it
    (within 0.001 from 2,000 cases at rates 0.8 and 0.95) and costs more than the whole rest of a verdict."""
    n = _checks.count(n, "n", minimum=1)
    alpha = _checks.alpha_level(alpha)
    target = _checks.probability(power, "power")
    noise = noise_from_rate(rate)
    drop = _connor_drop(n, float(rate), alpha, target)
    return DetectableDrop(min(1.0, drop), n, 1, noise.sd, noise.source, alpha, target, 0.0, "connor_mcnemar")


def _bracket(n: int, rate: float, alpha: float, power: float, critical: _CriticalRegressions) -> tuple[float, float]:
    """``(low, high)`` with the exact power below ``power`` at ``low`` and at least it at
    ``high``: around Connor's approximation, widened until it holds (a few exact sums instead of
    bisecting all of ``[0, rate]``)."""
    guess = _connor_drop(n, rate, alpha, power)
    low, high = 0.9 * guess, min(rate, 1.1 * guess + 1e-4)
    while high < rate and _exact_power(n, rate, high, critical) < power:
        low, high = high, min(rate, 2 * high)
    while low > 0 and _exact_power(n, rate, low, critical) >= power:
        high, low = low, low / 2 if low > 1e-4 else 0.0
    return low, high


def mcnemar_detectable_drop(n: int, rate: float, *, alpha: float = 0.05, power: float = 0.8) -> DetectableDrop:
    """The smallest drop from ``rate`` that the exact one-sided McNemar test on ``n`` cases
    answered once detects with probability ``power`` (:func:`mcnemar_power` solved by bisection,
    to 1e-5); 1 when no drop does (the run cannot fall below 0).

    The normal formula of :func:`minimum_detectable_drop` assumes the noise under a drop equals
    the noise without one; pass/fail answers vary more as their rate nears ½ and the exact test
    is discrete, so for small sets this is the drop the gate really detects (30 cases at 0.8:
    about 0.33, where the formula says 0.26). Connor (1987, Biometrics 43:207–211) gives the
    normal approximation of the same test, ``Δ √n = z(1 − α) √ψ + z(power) √(ψ − Δ²)`` with
    ``ψ`` the chance a case flips; the exact sum agrees with it on large sets and is cheap at any
    size.
    """
    n = _checks.count(n, "n", minimum=1)
    alpha = _checks.alpha_level(alpha)
    target = _checks.probability(power, "power")
    noise = noise_from_rate(rate)
    rate = float(rate)
    critical = _CriticalRegressions(alpha)
    if _exact_power(n, rate, rate, critical) < target:
        return DetectableDrop(1.0, n, 1, noise.sd, noise.source, alpha, target, 0.0, "exact_mcnemar")
    low, high = _bracket(n, rate, alpha, target, critical)
    while high - low > 1e-5:
        middle = (low + high) / 2
        if _exact_power(n, rate, middle, critical) >= target:
            high = middle
        else:
            low = middle
    return DetectableDrop(high, n, 1, noise.sd, noise.source, alpha, target, 0.0, "exact_mcnemar")
