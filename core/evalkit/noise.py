"""What a set can tell from noise, in words: the warning a tolerance below the minimum detectable
drop earns, and what it would take — more cases, or more answers per case (``--repeats``) — to
detect a given drop.

The minimum detectable drop of pass/fail outcomes answered once is the exact McNemar test's
(:func:`~evalkit.stats.mcnemar_detectable_drop`): the normal formula over-promises on small sets
(30 cases at 0.8: 0.26 by the formula, 0.33 caught four times in five). The cases such a drop
needs are therefore found by the exact power too (:func:`cases_for`); repeats average answers
into fractions, compared by the paired t test, whose needs the normal formula gives
(:func:`~evalkit.stats.repeats_needed`).
"""

from __future__ import annotations

import attrs

from .comparison_statistics import LARGE_SET, MetricSpec
from .stats import (
    MetricComparison,
    NoiseEstimate,
    cases_needed,
    mcnemar_power,
    noise_from_rate,
    repeats_needed,
)

__all__ = ["Needs", "cases_for", "needs_for", "noise_warning", "shown"]

#: The most cases :func:`cases_for` searches (beyond: "more than 1,000,000").
MAX_CASES = 1_000_000


def shown(value: float, percent: bool) -> str:
    """A drop or tolerance as a report shows it: ``10.0 pp`` for rates, ``0.100`` for means."""
    return f"{value * 100:.1f} pp" if percent else f"{value:.3f}"


def cases_for(rate: float, drop: float, *, alpha: float = 0.05, power: float = 0.8, repeats: int = 1) -> int:
    """The fewest cases whose gate detects a drop of ``drop`` from ``rate`` with ``power``: for
    one answer per case by the exact McNemar power (searched; the normal formula is the start),
    for several by the normal formula on the pass fractions."""
    noise = noise_from_rate(min(1.0, max(0.0, rate)), repeats)
    start = cases_needed(noise, drop, alpha=alpha, power=power, whole_cases=repeats == 1) if noise.variance > 0 else 2
    if repeats > 1 or drop > rate or start >= LARGE_SET:
        return min(start, MAX_CASES)
    low, high = 1, max(2, start)
    while mcnemar_power(high, rate, drop, alpha=alpha) < power:
        low, high = high, high * 2
        if high > MAX_CASES:
            return MAX_CASES
    while high - low > 1:
        middle = (low + high) // 2
        if mcnemar_power(middle, rate, drop, alpha=alpha) >= power:
            high = middle
        else:
            low = middle
    return high


@attrs.frozen
class Needs:
    """What detecting ``drop`` takes: ``cases`` answered as now, or ``repeats`` answers per case
    with today's cases (``None`` when more repeats would not get there: the noise is not in the
    answers, or the drop is below what the whole-case floor allows)."""

    drop: float
    cases: int
    repeats: int | None


def needs_for(measured: MetricComparison, drop: float) -> Needs:
    """What detecting ``drop`` on this metric takes, from the noise its comparison measured."""
    detectable = measured.detectable
    alpha, power = detectable.alpha, detectable.power
    if detectable.method in ("exact_mcnemar", "connor_mcnemar"):
        cases = cases_for(measured.baseline, drop, alpha=alpha, power=power)
        noise = noise_from_rate(min(1.0, max(0.0, measured.baseline)))
    else:
        noise = NoiseEstimate(detectable.sd**2 * detectable.repeats, detectable.repeats, detectable.source, detectable.n)
        cases = cases_needed(noise, drop, alpha=alpha, power=power) if noise.variance > 0 else measured.n
    more = repeats_needed(noise, drop, measured.n, alpha=alpha, power=power) if noise.variance > 0 else None
    return Needs(drop, cases, more)


def noise_warning(spec: MetricSpec, measured: MetricComparison, unit: str = "case", repeats: int = 1) -> str:
    """The warning a tolerance below the minimum detectable drop earns: the set cannot tell such a
    drop from noise, and what would."""
    tolerance = float(measured.tolerance)
    detectable = measured.detectable
    sentence = (
        f"warning: the tolerance of {spec.label} ({shown(tolerance, spec.percent)}) is below the smallest drop "
        f"{measured.n} {unit}s can detect ({shown(detectable.drop, spec.percent)}, one-sided alpha {detectable.alpha:g}, "
        f"power {detectable.power:g}): the set cannot tell a drop of {shown(tolerance, spec.percent)} from noise"
    )
    if tolerance <= 0:
        return sentence + "; no set can detect a drop of 0."
    needs = needs_for(measured, tolerance)
    ways = [f"about {needs.cases:,} {unit}s"]
    # Repeats average away the noise in the answers; with several answers per case already, noise
    # measured on the differences alone may lie between cases, where repeats cannot reach.
    answer_noise = not (repeats > 1 and detectable.source == "observed")
    if answer_noise and needs.repeats is not None and needs.repeats > repeats and unit == "case":
        ways.append(f"--repeats {needs.repeats}")
    return sentence + f"; {' or '.join(ways)} would."
