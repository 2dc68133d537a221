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
from .config import MAX_REPEATS
from .stats import (
    MetricComparison,
    NoiseEstimate,
    cases_needed,
    mcnemar_power,
    noise_from_rate,
    repeats_needed,
)
from .wording import argument, counted

__all__ = ["MAX_CASES", "SMALLEST_DROP", "Needs", "askable", "cases_for", "cases_text", "needs_for", "noise_warning", "repeats_way", "shown"]

#: The most cases :func:`cases_for` searches (beyond: "more than 1,000,000").
MAX_CASES = 1_000_000
#: The smallest drop the power formulas are asked about. A drop below it takes astronomically more
#: than :data:`MAX_CASES` cases (or :data:`~evalkit.config.MAX_REPEATS` answers a case) to detect,
#: and the formulas' squares would overflow a float: a tolerance of 1e-300, a valid number in
#: 0..1, crashed a run's report and ``evalkit plan`` with OverflowError.
SMALLEST_DROP = 1e-9


def askable(drop: float) -> float:
    """``drop`` as the power formulas are asked about it: at least :data:`SMALLEST_DROP`."""
    return max(drop, SMALLEST_DROP)


def shown(value: float, percent: bool) -> str:
    """A drop or tolerance as a report shows it: ``10.0 pp`` for rates, ``0.100`` for means."""
    return f"{value * 100:.1f} pp" if percent else f"{value:.3f}"


def cases_for(rate: float, drop: float, *, alpha: float = 0.05, power: float = 0.8, repeats: int = 1) -> int | None:
    """The fewest cases whose gate detects a drop of ``drop`` from ``rate`` with ``power``: for
    one answer per case by the exact McNemar power (searched; the normal formula is the start),
    for several by the normal formula on the pass fractions.

    ``None`` when no number of cases is the answer: a rate cannot fall below 0, so a drop larger
    than the rate (any drop from 0 %) never happens and there is nothing to detect. It said
    "about 2 cases" there, from a noise of 0 (no hits in either run)."""
    rate = min(1.0, max(0.0, rate))
    drop = askable(drop)
    if drop > rate:
        return None
    noise = noise_from_rate(rate, repeats)
    start = cases_needed(noise, drop, alpha=alpha, power=power, whole_cases=repeats == 1) if noise.variance > 0 else 2
    if repeats > 1 or start >= LARGE_SET:
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
    """What detecting ``drop`` takes: ``cases`` answered as now (``None``: no number of cases, the
    rate cannot drop that far, :func:`cases_for`), or ``repeats`` answers per case with today's
    cases (``None`` when more repeats would not get there: the noise is not in the answers, or the
    drop is below what the whole-case floor allows)."""

    drop: float
    cases: int | None
    repeats: int | None


def needs_for(measured: MetricComparison, drop: float) -> Needs:
    """What detecting ``drop`` on this metric takes, from the noise its comparison measured."""
    asked = askable(drop)
    detectable = measured.detectable
    alpha, power = detectable.alpha, detectable.power
    if detectable.method in ("exact_mcnemar", "connor_mcnemar"):
        cases = cases_for(measured.baseline, asked, alpha=alpha, power=power)
        noise = noise_from_rate(min(1.0, max(0.0, measured.baseline)))
    else:
        noise = NoiseEstimate(detectable.sd**2 * detectable.repeats, detectable.repeats, detectable.source, detectable.n)
        cases = min(cases_needed(noise, asked, alpha=alpha, power=power), MAX_CASES) if noise.variance > 0 else measured.n
    more = repeats_needed(noise, asked, measured.n, alpha=alpha, power=power) if noise.variance > 0 else None
    return Needs(drop, cases, more)


def repeats_way(needed: int | None, now: int, falls_short: bool) -> int | None:
    """``needed`` answers a case as a way to detect a drop, or ``None`` when it is none: more than
    a run takes (:data:`~evalkit.config.MAX_REPEATS`), or no more than ``now`` while the cases
    fall short (the normal formula's promise where the exact test says otherwise)."""
    if needed is None or needed > MAX_REPEATS or (falls_short and needed <= now):
        return None
    return needed


def cases_text(cases: int, unit: str = "case") -> str:
    """``about 1,234 cases``, or ``1,000,000 or more cases`` at :data:`MAX_CASES` (the most counted)."""
    return f"{MAX_CASES:,} or more {unit}s" if cases >= MAX_CASES else f"about {cases:,} {unit if cases == 1 else unit + 's'}"


def noise_warning(spec: MetricSpec, measured: MetricComparison, unit: str = "case", repeats: int = 1) -> str | None:
    """The warning a tolerance below the minimum detectable drop earns: the set cannot tell such a
    drop from noise, and what would. ``None`` when the baseline's rate cannot drop by the
    tolerance at all (a 0 % baseline): no drop beyond it can happen, so none can hide in noise."""
    tolerance = float(measured.tolerance)
    detectable = measured.detectable
    sentence = (
        f"warning: the tolerance of {spec.label} ({shown(tolerance, spec.percent)}) is below the smallest drop "
        f"{counted(measured.n, unit)} can detect ({shown(detectable.drop, spec.percent)}, one-sided alpha {detectable.alpha:g}, "
        f"power {detectable.power:g}): the set cannot tell a drop of {shown(tolerance, spec.percent)} from noise"
    )
    if tolerance <= 0:
        return sentence + "; no set can detect a drop of 0."
    needs = needs_for(measured, tolerance)
    if needs.cases is None:
        return None
    ways = [cases_text(needs.cases, unit)]
    # Repeats average away the noise in the answers; with several answers per case already, noise
    # measured on the differences alone may lie between cases, where repeats cannot reach.
    answer_noise = not (repeats > 1 and detectable.source == "observed")
    more = repeats_way(needs.repeats, repeats, falls_short=True)  # a warning: these cases fall short
    if answer_noise and more is not None and unit == "case":
        ways.append(argument("repeats", more))  # made as it is shown (never stored): the caller's word
    return sentence + f"; {' or '.join(ways)} would."
