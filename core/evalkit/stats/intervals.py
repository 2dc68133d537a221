"""A confidence interval, and the Wilson score interval for one proportion it is built from."""

from __future__ import annotations

import math

import attrs

from . import _checks
from .distributions import normal_quantile

__all__ = ["Interval", "wilson_interval"]


@attrs.frozen
class Interval:
    """A two-sided confidence interval ``[low, high]`` at ``confidence`` (0.95 for a 95 % interval).

    Its ends are also one-sided bounds: ``low`` is a lower confidence bound at level
    ``(1 + confidence) / 2`` (0.975 for a 95 % interval), and likewise ``high``.
    """

    low: float
    high: float
    confidence: float

    def __contains__(self, value: float) -> bool:
        return self.low <= value <= self.high

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low

    def as_list(self) -> list[float]:
        """``[low, high]``, as a verdict's ``ci95`` is written."""
        return [self.low, self.high]


def z_for(confidence: float) -> float:
    """The standard normal quantile of a two-sided interval at ``confidence`` (1.96 for 0.95)."""
    return normal_quantile(0.5 + confidence / 2)


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> Interval:
    """The Wilson (1927) score interval for a proportion ``successes / trials``.

    ``(x + z²/2 ± z √(x (n − x) / n + z²/4)) / (n + z²)``: never outside ``[0, 1]``, never
    empty, with close to nominal coverage even for small ``n`` (Newcombe 1998a, Statist. Med.
    17:857–872).
    """
    trials = _checks.count(trials, "trials", minimum=1)
    successes = _checks.count(successes, "successes")
    if successes > trials:
        raise _checks.StatisticsInputError(f"successes is {successes}, more than the {trials} trials")
    confidence = _checks.probability(confidence, "confidence")
    z = z_for(confidence)
    z2 = z * z
    centre = successes + z2 / 2
    half = z * math.sqrt(successes * (trials - successes) / trials + z2 / 4)
    low = max(0.0, (centre - half) / (trials + z2))
    high = min(1.0, (centre + half) / (trials + z2))
    if successes == 0:
        low = 0.0  # exact: rounding must not leave the estimate outside its own interval
    if successes == trials:
        high = 1.0
    return Interval(low, high, confidence)
